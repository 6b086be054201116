import { importCaseFile } from '../engine/cases/case-bundle.js';
import { CaseError } from '../engine/cases/case-library.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOneArg } from './parse-or-usage.js';
import { printJson } from './store-common.js';

const IMPORT_HELP = `stepbox case import FILE [--name NAME] [--force] [--json]

Adds a case bundle (from stepbox case export) to the store's case library
($STEPBOX_HOME/cases). It must load like any case; a path that would leave its folder is
refused. --name renames it; --force replaces a library case of that name.

Example:
  stepbox case import flaky-timeout.case.json && stepbox case verify flaky-timeout
`;

/** \`stepbox case import\` — a colleague's case joins the library. */
export const command: CliCommand = {
  name: 'case import',
  summary: "add a case bundle to the store's case library",
  help: IMPORT_HELP,
  async run(argv, io) {
    const { values, arg: file } = parseOneArg(
      argv,
      {
        name: { type: 'string' },
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      'FILE (a .case.json from stepbox case export)',
    );
    try {
      // Streamed: a bundle's files go to disk as they are read (memory bounded whatever their size).
      const done = importCaseFile(file, { name: values.name, force: values.force });
      if (values.json) printJson(io, done);
      else io.stdout.write(`case ${done.name}: ${done.dir}\n`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof CaseError) throw new UsageError(e.message);
      throw e;
    }
  },
};
