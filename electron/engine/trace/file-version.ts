import { lstatSync, type Stats } from 'node:fs';
import { traceBytesAt } from './trace-reader.js';
import { SETTLE_MS, statsKey, unsettledReadStands } from './unsettled-reads.js';

export { SETTLE_MS } from './unsettled-reads.js';

/**
 * A trace file as it was at one moment: what the index, the flags it keeps and the window's
 * parsed traces are kept under. Size and mtime alone missed a rewrite in place that kept both
 * (an editor, `touch -r`): the ctime (which no one can set back) and the inode say it changed.
 */
export interface FileVersion {
  readonly path: string;
  readonly size: number;
  readonly mtime: number;
  readonly ctime: number;
  readonly ino: number;
  /** Whether it was seen {@link SETTLE_MS} or more after its ctime (see there). */
  readonly settled: boolean;
}

/** The version of `path` from its stat `st`, settled or not as of `now`. */
export function versionOf(path: string, st: Stats, now: number = Date.now()): FileVersion {
  return {
    path,
    size: st.size,
    mtime: st.mtimeMs,
    ctime: st.ctimeMs,
    ino: st.ino,
    settled: now - st.ctimeMs >= SETTLE_MS,
  };
}

/** A file's own version (a link's, never its target's), or null when it is gone. */
export function fileVersion(path: string): FileVersion | null {
  const now = Date.now();
  try {
    return versionOf(path, lstatSync(path), now);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** One string per version: equal strings, the same file content (once settled). */
export function versionKey(v: FileVersion): string {
  return `${statsOf(v)}:${v.settled ? 's' : 'u'}`;
}

/**
 * For a settled version read before it settled: the unsettled version's string, when the file
 * holds the very bytes read then (unsettled-reads.ts), so what was read, indexed and checked
 * under it stands and is not done again; else null. Never the settled version's own string:
 * another process (one that did not read it then) names it by {@link versionKey}, and the
 * index they share must hold one name for it (see EpisodeIndex.refresh).
 */
export function standsFor(v: FileVersion): string | null {
  if (!v.settled) return null;
  const stats = statsOf(v);
  return unsettledReadStands(stats, () => traceBytesAt(v.path, stats)) ? `${stats}:u` : null;
}

function statsOf(v: FileVersion): string {
  return statsKey(v.path, { size: v.size, mtimeMs: v.mtime, ctimeMs: v.ctime, ino: v.ino });
}
