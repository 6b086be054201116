import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../sha256.js';
import type { TreeEntry } from '../../../shared/tree-hash.js';
import { treeHashOf } from '../sandbox/manifest.js';
import type { SnapshotManifest, SnapshotStore } from '../sandbox/snapshot-store.js';
import type { FolderListing, SkippedPath } from './folder-listing.js';

/**
 * A project folder into an episode's snapshot store: each file's content as a blob, the
 * folder as a manifest. Restoring that manifest is how the files get into /workspace — a
 * tmpfs, which `docker cp` and putArchive do not see — through the same fast, verified path
 * a rollback takes; snapshot 0, taken after `files` and `setup`, then holds them, so a
 * fork, a replay and a bundle carry the files as imported, never the folder as it is later.
 */

/** Files up to this size are read whole; larger ones are hashed, then streamed in chunks. */
const WHOLE_MAX = 8 * 1024 * 1024;
const CHUNK = 4 * 1024 * 1024;

/** A folder imported into a store. */
export interface ImportedFolder {
  readonly manifest: SnapshotManifest;
  /** Paths listed but not readable now (skipped), after the listing's own skipped ones. */
  readonly skipped: readonly SkippedPath[];
  readonly files: number;
  readonly bytes: number;
}

/**
 * Reads every file of `listing` (never through a symlink: O_NOFOLLOW, and a regular file
 * checked on the open descriptor) into `store`, and returns the manifest of the folder as
 * read. A file that cannot be read, or is no longer a file, is skipped and listed.
 */
export async function importFolder(listing: FolderListing, store: SnapshotStore): Promise<ImportedFolder> {
  const entries: TreeEntry[] = [];
  const skipped: SkippedPath[] = [...listing.skipped];
  const gone = new Set<string>();
  let bytes = 0;
  let files = 0;
  for (const e of listing.entries) {
    if (e.type !== 'file') {
      entries.push(e);
      continue;
    }
    const got = await importFile(join(listing.root, e.path), store);
    if ('why' in got) {
      skipped.push({ path: e.path, why: got.why });
      gone.add(e.path);
      continue;
    }
    entries.push({ ...e, size: got.size, hash: got.hash });
    bytes += got.size;
    files++;
  }
  const kept = gone.size ? entries.filter((e) => !gone.has(e.path)) : entries;
  return { manifest: { treeHash: treeHashOf(kept), entries: kept }, skipped, files, bytes };
}

/** One file into the store: its hash and size, or why it was skipped. */
async function importFile(
  path: string,
  store: SnapshotStore,
): Promise<{ hash: string; size: number } | { why: string }> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    return { why: `cannot be read (${(e as NodeJS.ErrnoException).code})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { why: 'it is no longer a file' };
    if (stat.size <= WHOLE_MAX) {
      const content = readAll(fd, stat.size);
      const hash = sha256Hex(content);
      await store.putBlob(hash, content);
      return { hash, size: content.length };
    }
    // Large: hashed in chunks, then (when the store lacks it) streamed in a second pass,
    // which the writer checks against the hash (a file changed between them is refused).
    const digest = createHash('sha256');
    let size = 0;
    for (const chunk of chunks(fd)) {
      digest.update(chunk);
      size += chunk.length;
    }
    const hash = digest.digest('hex');
    if (await store.hasBlob(hash)) return { hash, size };
    if (!store.openBlobWriter) {
      await store.putBlob(hash, readAll(fd, size));
      return { hash, size };
    }
    const writer = await store.openBlobWriter(hash);
    try {
      for (const chunk of chunks(fd)) await writer.write(chunk);
      await writer.commit();
    } catch {
      await writer.abort();
      return { why: 'it changed while it was copied' };
    }
    return { hash, size };
  } finally {
    closeSync(fd);
  }
}

function readAll(fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let at = 0;
  while (at < size) {
    const n = readSync(fd, buf, at, size - at, at);
    if (n === 0) break;
    at += n;
  }
  return at === size ? buf : buf.subarray(0, at);
}

function* chunks(fd: number): Generator<Buffer> {
  let at = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(CHUNK);
    const n = readSync(fd, buf, 0, CHUNK, at);
    if (n === 0) return;
    at += n;
    yield buf.subarray(0, n);
  }
}
