import { lstatSync, type Stats } from 'node:fs';

/**
 * How long after its last change a file's version is trusted to name its content: a write
 * within the same clock tick of the file system (coarse kernel timestamps: a few ms on ext4,
 * 2 s on FAT) keeps the size and the times, so a version seen sooner than this after the
 * file's ctime may hide a later write of the same size. It is read again once settled.
 */
export const SETTLE_MS = 2_000;

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
  return `${v.path}:${v.size}:${v.mtime}:${v.ctime}:${v.ino}:${v.settled ? 's' : 'u'}`;
}
