import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { readOpened } from '../read-opened.js';
import { join } from 'node:path';
import { sha256Hex } from '../sha256.js';
import type { TreeEntry } from '../../../shared/tree-hash.js';
import { BLOB_CHUNK_BYTES } from '../sandbox/blob-transfer.js';
import { treeHashOf } from '../sandbox/manifest.js';
import {
  putOwnBlobs,
  type BlobWriter,
  type OwnBlob,
  type SnapshotManifest,
  type SnapshotStore,
  type StoredBlob,
} from '../sandbox/snapshot-store.js';
import type { FolderListing, SkippedPath } from './folder-listing.js';
import { READ_FLAGS, chunkReader, type ReadChunk } from './chunk-reader.js';

/**
 * A project folder into an episode's snapshot store: each file's content as a blob, the
 * folder as a manifest. Restoring that manifest is how the files get into /workspace — a
 * tmpfs, which `docker cp` and putArchive do not see — through the same fast, verified path
 * a rollback takes; snapshot 0, taken after `files` and `setup`, then holds them, so a
 * fork, a replay and a bundle carry the files as imported, never the folder as it is later.
 *
 * One pass over the folder: files are read in chunks of up to {@link BLOB_CHUNK_BYTES}
 * (straight into the chunk's buffer, on a thread of their own: see chunk-reader.ts), each
 * file hashed once there, and each chunk then goes two ways at once while the next ones
 * are read: into the store (not hashed again: the hash is of this process's own reads; one
 * pack file per chunk) and, given a
 * {@link ImportSink}, into the sandbox ahead of the restore (whose helper takes the hashes
 * by name: the bytes never left this process before). Where a folder of 10,000 small
 * files went: reading one file at a time, a buffer each, then hashing it twice and copying
 * it into the stage's chunks; then a store file and a helper hash per file.
 */

/** Files up to this size are read whole; larger ones are hashed, then streamed in chunks. */
const WHOLE_MAX = 8 * 1024 * 1024;
const CHUNK = 4 * 1024 * 1024;
/** Content kept in memory for the restore that follows (beyond it, the restore reads the store). */
const HELD_MAX = 256 * 1024 * 1024;
/** Chunks stored and sent while the next one is read, at most (memory: a few chunks). */
const CHUNKS_IN_FLIGHT = 2;
/** Chunks read (on the reader's thread) ahead of the one being stored and sent. */
const CHUNKS_READ_AHEAD = 2;

/**
 * Where a chunk of whole blobs goes besides the store, as soon as it is read: `blobs`
 * [hash, size] in payload order (a sandbox's stageAhead).
 */
export type ImportSink = (
  blobs: readonly (readonly [string, number])[],
  payload: Uint8Array,
  /** Always true: the hashes are this process's own, of these bytes (see Sandbox.stageAhead). */
  hashedHere: boolean,
) => Promise<void>;

/** A folder imported into a store. */
export interface ImportedFolder {
  readonly manifest: SnapshotManifest;
  /** Paths listed but not readable now (skipped), after the listing's own skipped ones. */
  readonly skipped: readonly SkippedPath[];
  readonly files: number;
  readonly bytes: number;
  /**
   * The store to restore the manifest from: `store`, with the content just read still in
   * memory when it went to no sink (up to {@link HELD_MAX}), so the restore does not read
   * 10,000 files back from disk.
   */
  readonly source: SnapshotStore;
}

/** What became of one listed file. */
type Read = { hash: string; size: number } | { why: string } | 'again';

/**
 * Reads every file of `listing` (never through a symlink: O_NOFOLLOW, and a regular file
 * checked on the open descriptor) into `store`, and returns the manifest of the folder as
 * read. A file that cannot be read, or is no longer a file, is skipped and listed. Given a
 * `sink`, each chunk read goes there too; a sink that fails gets no more (the restore then
 * sends from the store what it lacks).
 */
export async function importFolder(
  listing: FolderListing,
  store: SnapshotStore,
  sink?: ImportSink,
): Promise<ImportedFolder> {
  const skipped: SkippedPath[] = [...listing.skipped];
  const held = new Map<string, Uint8Array>();
  let heldBytes = 0;
  const hold = (hash: string, content: Uint8Array) => {
    if (sink || heldBytes + content.length > HELD_MAX || held.has(hash)) return;
    held.set(hash, content);
    heldBytes += content.length;
  };
  const results = new Array<Read | undefined>(listing.entries.length);
  let sinking = sink;
  const seen = new Set<string>();
  const inFlight: Promise<void>[] = [];
  const chunks = [...chunksOf(listing.entries)];
  const reader = chunkReader();
  const reads: Promise<ReadChunk>[] = [];
  const readAhead = (k: number) => {
    if (k >= chunks.length) return;
    const indexes = chunks[k].indexes;
    reads[k] = reader.read(
      indexes.map((i) => join(listing.root, listing.entries[i].path)),
      indexes.map((i) => listing.entries[i].size),
    );
  };
  for (let k = 0; k < CHUNKS_READ_AHEAD; k++) readAhead(k);
  try {
    for (let c = 0; c < chunks.length; c++) {
      const chunk = chunks[c];
      const { slab, files: got } = await reads[c];
      delete reads[c];
      readAhead(c + CHUNKS_READ_AHEAD);
      const own: OwnBlob[] = [];
      const parts: [string, number][] = [];
      let whole = true;
      for (let k = 0; k < chunk.indexes.length; k++) {
        const i = chunk.indexes[k];
        const r = got[k];
        if (typeof r === 'string' || 'why' in r) {
          results[i] = r;
          whole = false;
          continue;
        }
        const content = slab.subarray(r.at, r.at + r.size);
        const hash = r.hash;
        results[i] = { hash, size: r.size };
        if (seen.has(hash)) {
          whole = false;
          continue;
        }
        seen.add(hash);
        own.push({ hash, content });
        parts.push([hash, r.size]);
        hold(hash, content);
      }
      const storing = putOwnBlobs(store, own);
      let sending: Promise<void> | undefined;
      if (sinking && parts.length) {
        const to = sinking;
        // The chunk's buffer as it is when every file filled its place and none repeats.
        const payload = whole ? slab : Buffer.concat(own.map((b) => b.content));
        sending = to(parts, payload, true).catch(() => {
          sinking = undefined;
        });
      }
      inFlight.push(Promise.all([storing, sending]).then(() => undefined));
      if (inFlight.length >= CHUNKS_IN_FLIGHT) await inFlight.shift();
    }
    await Promise.all(inFlight);
  } finally {
    reader.close();
  }
  // Large files, and small ones that changed size since the listing: one at a time, to the store only.
  for (let i = 0; i < listing.entries.length; i++) {
    const e = listing.entries[i];
    if (e.type === 'file' && (results[i] === undefined || results[i] === 'again'))
      results[i] = await importFile(join(listing.root, e.path), store, hold);
  }
  const entries: TreeEntry[] = [];
  let bytes = 0;
  let files = 0;
  listing.entries.forEach((e, i) => {
    if (e.type !== 'file') {
      entries.push(e);
      return;
    }
    const r = results[i] as Exclude<Read, 'again'>;
    if ('why' in r) {
      skipped.push({ path: e.path, why: r.why });
      return;
    }
    entries.push({ ...e, size: r.size, hash: r.hash });
    bytes += r.size;
    files++;
  });
  return {
    manifest: { treeHash: treeHashOf(entries), entries },
    skipped,
    files,
    bytes,
    source: held.size ? new HeldBlobs(store, held) : store,
  };
}

/** Listed files that share one buffer: their indexes in the listing, and their listed bytes. */
interface Chunk {
  readonly indexes: number[];
  bytes: number;
}

/** The listing's small files (up to one chunk each) in chunks of at most {@link BLOB_CHUNK_BYTES}. */
function* chunksOf(entries: readonly TreeEntry[]): Generator<Chunk> {
  let chunk: Chunk = { indexes: [], bytes: 0 };
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e.type !== 'file' || e.size > BLOB_CHUNK_BYTES) continue;
    if (chunk.bytes + e.size > BLOB_CHUNK_BYTES) {
      yield chunk;
      chunk = { indexes: [], bytes: 0 };
    }
    chunk.indexes.push(i);
    chunk.bytes += e.size;
  }
  if (chunk.indexes.length) yield chunk;
}

/** One file into the store: its hash and size, or why it was skipped. */
async function importFile(
  path: string,
  store: SnapshotStore,
  hold: (hash: string, content: Uint8Array) => void,
): Promise<{ hash: string; size: number } | { why: string }> {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (e) {
    return { why: `cannot be read (${(e as NodeJS.ErrnoException).code})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { why: 'it is no longer a file' };
    if (stat.size <= WHOLE_MAX) {
      const content = readOpened(fd, stat.size);
      const hash = sha256Hex(content);
      await putOwnBlobs(store, [{ hash, content }]);
      hold(hash, content);
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
      await store.putBlob(hash, readOpened(fd, size));
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

/**
 * A store whose blobs just imported are also in memory: reads of them are answered from
 * there, everything else (writes included) goes to the episode's store. Used for the one
 * restore right after the import.
 */
class HeldBlobs implements SnapshotStore {
  constructor(
    private readonly store: SnapshotStore,
    private readonly held: ReadonlyMap<string, Uint8Array>,
  ) {}

  async hasBlob(hash: string): Promise<boolean> {
    return this.held.has(hash) || this.store.hasBlob(hash);
  }

  putBlob(hash: string, content: Uint8Array): Promise<void> {
    return this.store.putBlob(hash, content);
  }

  async getBlob(hash: string): Promise<Uint8Array> {
    return this.held.get(hash) ?? this.store.getBlob(hash);
  }

  async openBlobWriter(hash: string): Promise<BlobWriter> {
    if (!this.store.openBlobWriter) throw new Error('the store streams no blobs in');
    return this.store.openBlobWriter(hash);
  }

  async readBlobRange(hash: string, offset: number, length: number): Promise<Uint8Array> {
    const blob = this.held.get(hash);
    if (blob) return blob.subarray(offset, offset + length);
    if (this.store.readBlobRange) return this.store.readBlobRange(hash, offset, length);
    return (await this.store.getBlob(hash)).subarray(offset, offset + length);
  }

  putManifest(manifest: SnapshotManifest): Promise<string> {
    return this.store.putManifest(manifest);
  }

  getManifest(id: string): Promise<SnapshotManifest> {
    return this.store.getManifest(id);
  }

  listBlobs(): Promise<readonly StoredBlob[]> {
    return this.store.listBlobs();
  }

  removeBlob(hash: string): Promise<void> {
    return this.store.removeBlob(hash);
  }

  listManifests(): Promise<readonly string[]> {
    return this.store.listManifests();
  }
}
