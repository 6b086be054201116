import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { atifFiles, importAtif, readAtif, type AtifImport } from '../engine/trace/atif-import.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { openStoreAndIndex, printJson } from './store-common.js';
import { countOf } from '../../shared/count-of.js';

const HELP = `stepbox import-atif FILE|DIR [--json]

Imports an ATIF trajectory (Agent Trajectory Interchange Format, ATIF-v1.0 to v1.7, as
Harbor and Terminal-Bench write trajectory.json) as a read-only episode in
$STEPBOX_HOME: \`show\`, \`search\`, \`check\` and the window view it (steps, tool calls,
observations, token metrics). FILE is one trajectory (trajectory.json), or JSON lines of
them (\`stepbox export --format atif --jsonl\`); DIR is a folder of such files (what
\`stepbox export --format atif\` writes for several branches). Each trajectory becomes
its own episode. Every file is validated against the ATIF schema first; nothing is
written when one is invalid. There
is no sandbox behind an imported episode, so open, fork and replay do not apply.

Options:
  --json   print {episodes: [{episode, steps, session_id}]}

Examples:
  npx stepbox import-atif jobs/2026-01-01/task-1/agent/trajectory.json
  npx stepbox import-atif run.atif.jsonl --json
  npx stepbox import-atif batch.atif/
`;

/** `stepbox import-atif` — ATIF trajectories as read-only episodes. */
export const command: CliCommand = {
  name: 'import-atif',
  summary: 'import an ATIF trajectory (Harbor, Terminal-Bench) as a read-only episode',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      }),
    );
    if (positionals.length !== 1) throw new UsageError('expected one FILE or DIR');
    const path = resolve(positionals[0]);
    if (!existsSync(path)) throw new UsageError(`no such file or folder: ${path}`);
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    try {
      const files = atifFiles(path);
      // All of them checked before any is imported: an invalid one leaves nothing behind.
      for (const f of files) readAtif(f);
      const episodes: AtifImport['episodes'][number][] = [];
      for (const file of files) {
        const out = await importAtif(store, file);
        episodes.push(...out.episodes);
        if (!values.json)
          for (const e of out.episodes)
            io.stdout.write(
              `Imported ${e.episode} (${countOf(e.steps, 'step')}) from ${file}\nNext: npx stepbox show ${e.episode}\n`,
            );
      }
      index.refresh(store);
      if (values.json) printJson(io, { episodes });
      return EXIT.ok;
    } finally {
      index.close();
    }
  },
};
