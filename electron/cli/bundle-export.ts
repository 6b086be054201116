import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { exportBundle } from '../engine/trace/bundle.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { openStoreAndIndex, printJson, resolveArg } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { formatBytes } from '../../shared/format-bytes.js';

const HELP = `stepbox bundle export EPISODE FILE [--json]

Writes one episode — every branch trace, the snapshot manifests and blobs they use, and
its metadata — into FILE (format stepbox.bundle/1: gzip'd JSONL, documented in
electron/engine/trace/bundle.ts), to hand a reproduction to a colleague. EPISODE may be
any id of the episode or its branches, or a unique prefix.

Options:
  --json   print {episode, branches, manifests, blobs, bytes, file}

Examples:
  npx stepbox bundle export ep-20261129-084512-3f2a repro.stepbox
  npx stepbox bundle import repro.stepbox      # on the colleague's machine
`;

/** `stepbox bundle export` — one episode into one file. */
export const command: CliCommand = {
  name: 'bundle export',
  summary: 'write an episode (traces + snapshots) into one file',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      }),
    );
    if (positionals.length !== 2) throw new UsageError('expected EPISODE and FILE');
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    index.close();
    const branch = resolveArg(store, positionals[0]);
    const file = resolve(positionals[1]);
    const out = { ...(await exportBundle(store, branch.episode, file)), file };
    if (values.json) printJson(io, out);
    else
      io.stdout.write(
        `Exported ${out.episode} (${out.branches.length} branch${out.branches.length === 1 ? '' : 'es'}, ${out.manifests} snapshots, ${out.blobs} blobs) to ${file} (${formatBytes(out.bytes)})\n`,
      );
    return EXIT.ok;
  },
};
