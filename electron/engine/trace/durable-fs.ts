import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Fsyncs a directory so a rename or create inside it survives a power cut. Some
 * platforms (Windows) cannot open a directory; there the rename is already durable
 * enough for our purpose and the error is deliberately ignored.
 */
export function fsyncDir(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch (e) {
    if (process.platform === 'win32') return;
    throw e;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The temporary file a durable write of `path` goes through: beside it, named with this pid (sweepable once it is gone). */
export function tempPathOf(path: string): string {
  return `${path}.tmp-${process.pid}-${Date.now().toString(36)}`;
}

/** The pid in a {@link tempPathOf} name, or null when `name` is not one. */
export function tempFilePid(name: string): number | null {
  const m = /\.tmp-(\d+)-[0-9a-z]+$/.exec(name);
  return m ? Number(m[1]) : null;
}

/** Writes `data` to `path` atomically: a temp file beside it, fsynced, renamed over, directory fsynced. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = tempPathOf(path);
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDir(dirname(path));
}
