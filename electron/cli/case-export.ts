import { writeFileSync } from 'node:fs';
import { exportCase } from '../engine/cases/case-bundle.js';
import { CaseError } from '../engine/cases/case-library.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOneArg } from './parse-or-usage.js';

const EXPORT_HELP = `stepbox case export NAME [--out FILE]

Packs a case (bundled, or your own from stepbox case new) into one JSON file
(format stepbox.case/1: every file of its folder) that a colleague adds to their library
with stepbox case import. Without --out it is written to NAME.case.json.

Example:
  stepbox case export flaky-timeout --out flaky-timeout.case.json
`;

/** \`stepbox case export\` — a case as one file. */
export const command: CliCommand = {
  name: 'case export',
  summary: 'pack a case into one file a colleague imports',
  help: EXPORT_HELP,
  async run(argv, io) {
    const { values, arg: name } = parseOneArg(
      argv,
      { out: { type: 'string' } },
      'case NAME (stepbox case list shows them)',
    );
    const out = values.out ?? `${name}.case.json`;
    try {
      const bundle = exportCase(name);
      writeFileSync(out, JSON.stringify(bundle) + '\n');
      io.stdout.write(`${out}: case ${bundle.name}, ${Object.keys(bundle.files).length} files\n`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof CaseError) throw new UsageError(e.message);
      throw e;
    }
  },
};
