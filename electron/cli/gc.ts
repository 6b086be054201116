import { parseArgs } from 'node:util';
import { gc, parseDuration } from '../engine/trace/gc.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { formatAge, openStoreAndIndex, printJson } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { formatBytes } from '../../shared/format-bytes.js';

const HELP = `stepbox gc [--older-than D] [--dry-run] [--json]

Frees space in $STEPBOX_HOME: removes episodes whose last activity is older than D
(when given; D like 7d, 12h, 30m, 2w, 1d12h), then snapshot blobs that no manifest
references. Episodes still being written by a live process are never touched.

Options:
  --older-than D   remove episodes idle for longer than D
  --dry-run        report what would be removed, remove nothing
  --json           print {episodes: [{id, bytes, age_ms}], blobs, blob_bytes, bytes_freed,
                   skipped_live, dry_run}

Examples:
  npx stepbox gc --older-than 7d
  npx stepbox gc --dry-run --json
`;

/** `stepbox gc` — remove old episodes and unreferenced blobs. */
export const command: CliCommand = {
  name: 'gc',
  summary: 'remove old episodes and unreferenced snapshot blobs',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          'older-than': { type: 'string' },
          'dry-run': { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    let olderThanMs: number | undefined;
    if (values['older-than'] !== undefined) {
      const d = parseDuration(values['older-than']);
      if (d === null)
        throw new UsageError(
          `--older-than takes a duration like 7d, 12h or 30m, not "${values['older-than']}"`,
        );
      olderThanMs = d;
    }
    const dryRun = values['dry-run'];
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    const report = await gc(store, { olderThanMs, dryRun });
    if (!dryRun) index.refresh(store);
    index.close();
    if (values.json) {
      printJson(io, { ...report, dry_run: dryRun });
      return EXIT.ok;
    }
    const verb = dryRun ? 'would remove' : 'removed';
    for (const e of report.episodes)
      io.stdout.write(`${verb} ${e.id} (idle ${formatAge(e.age_ms)}, ${formatBytes(e.bytes)})\n`);
    for (const id of report.skipped_live) io.stdout.write(`kept ${id}: a live process is writing it\n`);
    io.stdout.write(
      `${dryRun ? 'Would free' : 'Freed'} ${formatBytes(report.bytes_freed)}: ${report.episodes.length} episode${report.episodes.length === 1 ? '' : 's'}, ${report.blobs} unreferenced blob${report.blobs === 1 ? '' : 's'} (${formatBytes(report.blob_bytes)})\n`,
    );
    return EXIT.ok;
  },
};
