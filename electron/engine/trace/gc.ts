import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DiskEpisodeStore } from './episode-store.js';
import { logger } from '../log.js';
import { isProcessGone, pidExists, type ProcessIdentity } from '../process-identity.js';
import { TRACE_WRITER_HOST_RULE } from './interrupted.js';

const log = logger('gc');

// The one duration reader (shared: settings.json reads durations too).
export { parseDuration } from '../../../shared/parse-duration.js';

/** What gc removed (or, with `dryRun`, would remove). */
export interface GcReport {
  readonly episodes: readonly { id: string; bytes: number; age_ms: number }[];
  readonly blobs: number;
  readonly blob_bytes: number;
  readonly bytes_freed: number;
  /** Episodes left alone because a live process is still writing them. */
  readonly skipped_live: readonly string[];
}

/** True when some branch of the episode is open and its writer process still runs. */
function hasLiveWriter(store: DiskEpisodeStore, episode: string): boolean {
  return store.listBranches(episode).some((b) => {
    if (b.closed) return false;
    const writer = store.readTrace(b).header.writer as ProcessIdentity | undefined;
    return writer !== undefined && !isProcessGone(writer, TRACE_WRITER_HOST_RULE);
  });
}

/** Newest activity of an episode: its creation or the last write to any of its traces. */
function lastActivity(store: DiskEpisodeStore, episode: string): number {
  const created = store.meta(episode).created;
  return store
    .listBranches(episode)
    .reduce((t, b) => Math.max(t, statSync(store.currentTracePath(b)).mtimeMs), created);
}

/**
 * Removes the blobs of one episode's snapshot store that no manifest in it references.
 * Returns [count, bytes].
 */
async function sweepBlobs(
  store: DiskEpisodeStore,
  episode: string,
  dryRun: boolean,
): Promise<[number, number]> {
  const snapshots = store.snapshots(episode);
  const referenced = new Set<string>();
  for (const id of await snapshots.listManifests())
    for (const e of (await snapshots.getManifest(id)).entries) if (e.hash) referenced.add(e.hash);
  let count = 0;
  let bytes = 0;
  for (const blob of await snapshots.listBlobs()) {
    if (referenced.has(blob.hash)) continue;
    bytes += blob.size;
    count += 1;
    if (!dryRun) await snapshots.removeBlob(blob.hash);
  }
  return [count, bytes];
}

/** Removes what crashed removals and imports left behind (`.deleting-*`, `.importing-*` of dead pids). Returns bytes. */
function sweepLeftovers(store: DiskEpisodeStore, dryRun: boolean): number {
  let bytes = 0;
  for (const name of readdirSync(store.episodesDir)) {
    const m = /^\.(deleting|importing)-.*-(\d+)$/.exec(name);
    if (!m) continue;
    const pid = Number(m[2]);
    if (m[1] === 'importing' && pid !== process.pid && pidExists(pid)) continue;
    const path = join(store.episodesDir, name);
    bytes += DiskEpisodeStore.sizeOf(path);
    if (!dryRun) rmSync(path, { recursive: true, force: true });
  }
  return bytes;
}

/**
 * Garbage-collects the store: removes episodes whose last activity is older than
 * `olderThanMs` (when given), then blobs no manifest references in the remaining
 * episodes, and leftovers of crashed removals/imports. Episodes with a live writer are
 * never touched.
 */
export async function gc(
  store: DiskEpisodeStore,
  options: { olderThanMs?: number; now?: number; dryRun?: boolean } = {},
): Promise<GcReport> {
  const now = options.now ?? Date.now();
  const removed: { id: string; bytes: number; age_ms: number }[] = [];
  const skipped: string[] = [];
  let blobs = 0;
  let blobBytes = 0;
  for (const episode of store.listEpisodes()) {
    try {
      if (hasLiveWriter(store, episode)) {
        skipped.push(episode);
        continue;
      }
      const age = now - lastActivity(store, episode);
      if (options.olderThanMs !== undefined && age > options.olderThanMs) {
        const bytes = DiskEpisodeStore.sizeOf(store.episodeDir(episode));
        if (!options.dryRun) store.removeEpisode(episode);
        removed.push({ id: episode, bytes, age_ms: Math.round(age) });
        continue;
      }
      const [n, b] = await sweepBlobs(store, episode, options.dryRun ?? false);
      blobs += n;
      blobBytes += b;
    } catch (e) {
      log.warn(`episode ${episode}: skipped (${(e as Error).message})`);
    }
  }
  const leftovers = sweepLeftovers(store, options.dryRun ?? false);
  return {
    episodes: removed,
    blobs,
    blob_bytes: blobBytes,
    bytes_freed: removed.reduce((n, r) => n + r.bytes, 0) + blobBytes + leftovers,
    skipped_live: skipped,
  };
}
