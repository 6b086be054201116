import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { BUNDLE_LIMITS, importBundle } from '../engine/trace/bundle.js';
import { TraceCorruptError } from '../engine/trace/trace-reader.js';
import { parseSize } from '../../shared/size.js';
import { StoreError } from '../engine/trace/episode-store.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { openStoreAndIndex, printJson } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { formatBytes } from '../../shared/format-bytes.js';
import { consentFlags, describeWidenings } from '../../shared/isolation-policy.js';

const HELP = `stepbox bundle import FILE [--force] [--max-size SIZE] [--json]

Imports an episode bundle (from \`stepbox bundle export\`) into $STEPBOX_HOME (default
~/.stepbox). Every trace and blob hash is verified before anything lands in the store.
An episode that already exists is refused unless --force replaces it. The bundle is
decompressed as a stream and refused when it inflates past SIZE (default 4g; one line
at most 8m: content comes in chunks, streamed to disk), so a decompression bomb cannot
exhaust memory or disk.

Import reports what the bundle's recorded task asks for beyond the defaults (a network,
another image, higher limits). Importing never runs anything; opening, replaying,
forking or resuming such an episode is refused until you consent with --allow-network,
--allow-image, --allow-limits or --trust-recorded-task (the window asks).

Options:
  --force          replace an existing episode of the same id
  --max-size SIZE  the cap on the decompressed bundle (Docker size syntax: 8g, 500m)
  --json           print {episode, branches, manifests, blobs, bytes, asks: [{kind, field, asked,
                   default}]}

Examples:
  npx stepbox bundle import repro.stepbox
  STEPBOX_HOME=/tmp/scratch npx stepbox bundle import repro.stepbox --json
`;

/** `stepbox bundle import` — an episode bundle into the store. */
export const command: CliCommand = {
  name: 'bundle import',
  summary: 'import an episode bundle into the store',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          force: { type: 'boolean', default: false },
          'max-size': { type: 'string' },
          json: { type: 'boolean', default: false },
        },
        allowPositionals: true,
      }),
    );
    if (positionals.length !== 1) throw new UsageError('expected one FILE');
    let limits = BUNDLE_LIMITS;
    if (values['max-size'] !== undefined) {
      const max = parseSize(values['max-size']);
      if (max === null || max <= 0)
        throw new UsageError(`--max-size takes a size like 8g or 500m, not "${values['max-size']}"`);
      limits = { ...limits, totalBytes: max };
    }
    const file = resolve(positionals[0]);
    if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
    const { store, index } = openStoreAndIndex(io, { refresh: false });
    try {
      const out = await importBundle(store, file, { overwrite: values.force, limits });
      index.refresh(store);
      if (values.json) printJson(io, out);
      else
        io.stdout.write(
          `Imported ${out.episode} (${out.branches.length} branch${out.branches.length === 1 ? '' : 'es'}, ${out.manifests} snapshots, ${out.blobs} blobs, ${formatBytes(out.bytes)}) into ${store.home}\nNext: npx stepbox show ${out.episode}\n`,
        );
      if (out.asks.length > 0)
        (values.json ? io.stderr : io.stdout).write(
          `Its recorded task asks for a looser sandbox than the defaults: ${describeWidenings(out.asks)}.\nOpening, replaying, forking or resuming it needs ${consentFlags(out.asks)} (or --trust-recorded-task); nothing ran.\n`,
        );
      return EXIT.ok;
    } catch (e) {
      if (!(e instanceof StoreError) && !(e instanceof TraceCorruptError)) throw e;
      io.stderr.write(`stepbox bundle import: ${e.message}\n`);
      return EXIT.failed;
    } finally {
      index.close();
    }
  },
};
