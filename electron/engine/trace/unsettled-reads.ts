import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';

/**
 * How long after its last change a file's version is trusted to name its content: a write
 * within the same clock tick of the file system (coarse kernel timestamps: a few ms on ext4,
 * 2 s on FAT) keeps the size and the times, so a version seen sooner than this after the
 * file's ctime may hide a later write of the same size. It is read again once settled, unless
 * its bytes are found to be the ones read (below).
 */
export const SETTLE_MS = 2_000;

/** Files whose unsettled reads are remembered (the traces a window or two just read). */
const KEEP = 64;

interface UnsettledRead {
  /** The digest of the bytes read at these stats; null once two reads at them differed. */
  readonly digest: string | null;
  /** Once settled: whether the file still held those bytes (decided once). */
  stands?: boolean;
}

/** What trace files held when read before they settled, by their stats (see {@link statsKey}). */
const reads = new Map<string, UnsettledRead>();

/** A file's stats as one string: equal strings, the same version but for the settling. */
export function statsKey(path: string, st: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs' | 'ino'>): string {
  return `${path}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

function digestOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}

/**
 * Notes the bytes of `path` read at stats `st` while they had not settled. Why: a trace opened
 * right after it was written (an episode that just ended, the bench's long trace) was read,
 * parsed and checked by every QA rule under its unsettled version, then all of that again two
 * seconds later under the settled one, and the library's index read it a third time: a cold
 * open of a 10,000-step trace took ~2 s. Once settled, the same bytes mean the same content,
 * and what was made of them stands ({@link unsettledReadStands}).
 */
export function noteUnsettledRead(
  path: string,
  st: Stats,
  bytes: Uint8Array,
  now: number = Date.now(),
): void {
  if (now - st.ctimeMs >= SETTLE_MS) return;
  const key = statsKey(path, st);
  const digest = digestOf(bytes);
  const had = reads.get(key);
  reads.delete(key);
  // Two reads at the same stats that differ (a rewrite within one clock tick): neither stands.
  reads.set(key, had === undefined || had.digest === digest ? { digest } : { digest: null });
  while (reads.size > KEEP) reads.delete(reads.keys().next().value as string);
}

/**
 * Whether the file at stats `key`, now settled, holds the bytes read from it before it settled
 * (every read at those stats alike), so what was made of them stands: decided once, by the
 * digest of `readNow()` (null: it could not be read as it was, which never stands). False
 * when nothing was read at those stats before they settled.
 */
export function unsettledReadStands(key: string, readNow: () => Uint8Array | null): boolean {
  const r = reads.get(key);
  if (r === undefined || r.digest === null) return false;
  if (r.stands === undefined) {
    const bytes = readNow();
    r.stands = bytes !== null && digestOf(bytes) === r.digest;
  }
  return r.stands;
}
