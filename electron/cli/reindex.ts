import { parseArgs } from 'node:util';
import type { CliCommand } from './command.js';
import { EXIT } from './command.js';
import { openStoreAndIndex, printJson } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';

const HELP = `stepbox reindex [--json]

Rebuilds the SQLite index ($STEPBOX_HOME/index.sqlite) from the trace files, which are
the source of truth. QA flags of branches that still exist are kept (\`stepbox check\`
writes them). Safe to run while episodes are running.

Options:
  --json   print {branches, episodes, duration_ms}

Examples:
  npx stepbox reindex
  STEPBOX_HOME=/data/stepbox npx stepbox reindex --json
`;

/** `stepbox reindex` — rebuild the index from the traces. */
export const command: CliCommand = {
  name: 'reindex',
  summary: 'rebuild the episode index from the traces',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({ args: argv, options: { json: { type: 'boolean', default: false } } }),
    );
    const start = performance.now();
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    const branches = index.rebuild(store);
    const episodes = index.listEpisodes(Number.MAX_SAFE_INTEGER).length;
    index.close();
    const durationMs = performance.now() - start;
    if (values.json) printJson(io, { branches, episodes, duration_ms: durationMs });
    else
      io.stdout.write(
        `Indexed ${branches} branch${branches === 1 ? '' : 'es'} of ${episodes} episode${episodes === 1 ? '' : 's'} in ${Math.round(durationMs)} ms\n`,
      );
    return EXIT.ok;
  },
};
