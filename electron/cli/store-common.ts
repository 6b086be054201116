import { readOnlyIndex, type EpisodeIndex } from '../engine/trace/episode-index.js';
import type { DiskEpisodeStore, StoredBranch } from '../engine/trace/episode-store.js';
import { cliEngine, cliError } from './episode-cli.js';
import type { CliIo } from './command.js';
import { InfraError } from './command.js';

/**
 * Opens the store of `$STEPBOX_HOME` (sweeping orphaned traces) and its index, brought
 * up to date with the traces. Shared by list, show, search, gc, reindex and bundle.
 */
export function openStoreAndIndex(
  io: CliIo,
  options: { refresh?: boolean } = {},
): {
  store: DiskEpisodeStore;
  index: EpisodeIndex;
} {
  const engine = cliEngine(io);
  const store = engine.store;
  let index: EpisodeIndex;
  try {
    index = engine.index();
  } catch (e) {
    if (!isDiskFull(e))
      throw new InfraError(
        `cannot open the index in ${store.home}: ${(e as Error).message}`,
        `rm ${store.home}/index.sqlite* && stepbox reindex`,
      );
    return readOnly(io, store, e);
  }
  if (options.refresh !== false) {
    try {
      index.refresh(store);
    } catch (e) {
      if (!isDiskFull(e)) throw e;
      index.close();
      return readOnly(io, store, e);
    }
  }
  return { store, index };
}

/** Resolves an EPISODE argument (episode or branch id, or a unique prefix); a bad one is a usage error. */
export function resolveArg(store: DiskEpisodeStore, id: string): StoredBranch {
  try {
    return store.resolve(id);
  } catch (e) {
    // An id that names nothing is the caller's mistake; a damaged store is not (main reports it, exit 3).
    throw cliError(e);
  }
}

/** `3s`, `5m`, `2h`, `4d` — how long ago. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** Writes the one JSON document of `--json`. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Pads cells into aligned columns (left-aligned; a trailing column is not padded). */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return (
    rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n') +
    '\n'
  );
}

/** SQLite's words for a disk it cannot write to (full, or failing on a write). */
function isDiskFull(e: unknown): boolean {
  const code = String((e as { code?: unknown }).code ?? '');
  const message = e instanceof Error ? e.message : String(e);
  return (
    /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code) ||
    /disk is full|disk I\/O error|readonly database|ENOSPC/i.test(message)
  );
}

/**
 * The store on a disk that cannot be written: `list` and `show` answer from an index that
 * writes nothing (the file read-only, else the traces), saying so on stderr with the fix.
 */
function readOnly(
  io: CliIo,
  store: DiskEpisodeStore,
  cause: unknown,
): { store: DiskEpisodeStore; index: EpisodeIndex } {
  const { index, how } = readOnlyIndex(store);
  io.stderr.write(
    `stepbox: the store cannot be written (${(cause as Error).message}): answering read-only (${how}); free space on the disk of ${store.home}, then stepbox reindex\n`,
  );
  return { store, index };
}
