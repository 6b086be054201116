import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { importAtif } from '../engine/trace/atif-import.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { openStoreAndIndex, printJson } from './store-common.js';

const HELP = `stepbox import-atif FILE [--json]

Imports an ATIF trajectory (Agent Trajectory Interchange Format, ATIF-v1.0 to v1.7, as
Harbor and Terminal-Bench write trajectory.json) as a read-only episode in
$STEPBOX_HOME: \`show\`, \`search\`, \`check\` and the window view it (steps, tool calls,
observations, token metrics). FILE is one trajectory, or JSON lines of them (what
\`stepbox export --format atif\` writes); each becomes its own episode. The file is
validated against the ATIF schema first; nothing is written for an invalid one. There
is no sandbox behind an imported episode, so open, fork and replay do not apply.

Options:
  --json   print {episodes: [{episode, steps, session_id}]}

Examples:
  npx stepbox import-atif jobs/2026-01-01/task-1/agent/trajectory.json
  npx stepbox import-atif run.atif.jsonl --json
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
    if (positionals.length !== 1) throw new UsageError('expected one FILE');
    const file = resolve(positionals[0]);
    if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    try {
      const out = await importAtif(store, file);
      index.refresh(store);
      if (values.json) printJson(io, out);
      else
        for (const e of out.episodes)
          io.stdout.write(
            `Imported ${e.episode} (${e.steps} steps) from ${file}\nNext: npx stepbox show ${e.episode}\n`,
          );
      return EXIT.ok;
    } finally {
      index.close();
    }
  },
};
