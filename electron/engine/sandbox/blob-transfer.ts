import { createHash } from 'node:crypto';
import type { HelperCall } from './helper-protocol.js';
import type { BlobWriter, ManifestEntry, SnapshotStore } from './snapshot-store.js';

/**
 * Blobs cross between the helper and the host in chunks of at most this many bytes, so the
 * memory of both is independent of a file's size: small files are batched up to it, a
 * larger file is read (snapshot) or staged (restore) one chunk at a time.
 */
export const BLOB_CHUNK_BYTES = 4 * 1024 * 1024;

/** The content changed between the helper's scan and its transfer (a command still writing). */
export class BlobChanged extends Error {}

/** A writer that keeps the chunks and stores them whole: for stores that cannot stream. */
function bufferingWriter(store: SnapshotStore, hash: string): BlobWriter {
  const chunks: Uint8Array[] = [];
  return {
    write: async (chunk) => {
      chunks.push(Uint8Array.from(chunk));
    },
    commit: () => store.putBlob(hash, Buffer.concat(chunks)),
    abort: async () => undefined,
  };
}

/** Bytes [offset, offset + length) of a stored blob (fewer at its end). */
function readRange(store: SnapshotStore, hash: string, offset: number, length: number): Promise<Uint8Array> {
  if (store.readBlobRange) return store.readBlobRange(hash, offset, length);
  return store.getBlob(hash).then((b) => b.subarray(offset, offset + length));
}

/**
 * Copies the blobs of `hashes` (as listed in `entries`) from the helper's last scan into
 * `store`: small ones batched, large ones in chunks straight into the store's writer. A
 * blob whose bytes do not hash to its name (the file changed since the scan) rejects with
 * {@link BlobChanged} and nothing is stored under that name. Resolves with the bytes moved.
 */
export async function fetchBlobs(
  call: HelperCall,
  store: SnapshotStore,
  hashes: readonly string[],
  entries: readonly ManifestEntry[],
): Promise<number> {
  const size = new Map(entries.map((e) => [e.hash, e.size]));
  let bytes = 0;
  let batch: string[] = [];
  let batched = 0;
  const flush = async () => {
    if (!batch.length) return;
    const r = await call('blobs', { hashes: batch }, undefined, BLOB_CHUNK_BYTES);
    const sizes = r.header.sizes;
    let off = 0;
    for (let i = 0; i < batch.length; i++) {
      const blob = r.payload.subarray(off, off + sizes[i]);
      off += sizes[i];
      if (createHash('sha256').update(blob).digest('hex') !== batch[i])
        throw new BlobChanged(`the file with content ${batch[i]} changed while it was captured`);
      await store.putBlob(batch[i], blob);
    }
    bytes += off;
    batch = [];
    batched = 0;
  };
  for (const h of hashes) {
    const n = size.get(h) ?? 0;
    if (n <= BLOB_CHUNK_BYTES) {
      if (batched + n > BLOB_CHUNK_BYTES) await flush();
      batch.push(h);
      batched += n;
      continue;
    }
    bytes += await fetchLarge(call, store, h, n);
  }
  await flush();
  return bytes;
}

async function fetchLarge(
  call: HelperCall,
  store: SnapshotStore,
  hash: string,
  size: number,
): Promise<number> {
  const writer = store.openBlobWriter ? await store.openBlobWriter(hash) : bufferingWriter(store, hash);
  const digest = createHash('sha256');
  try {
    for (let off = 0; off < size; off += BLOB_CHUNK_BYTES) {
      const length = Math.min(BLOB_CHUNK_BYTES, size - off);
      const r = await call('blob_read', { hash, offset: off, length }, undefined, BLOB_CHUNK_BYTES);
      if (r.payload.length !== length)
        throw new BlobChanged(`the file with content ${hash} changed size while it was captured`);
      digest.update(r.payload);
      await writer.write(r.payload);
    }
    if (digest.digest('hex') !== hash)
      throw new BlobChanged(`the file with content ${hash} changed while it was captured`);
    await writer.commit();
  } catch (e) {
    await writer.abort();
    throw e;
  }
  return size;
}

/** Blob reads under way at once while a chunk is assembled (small files are many). */
const READS_AT_ONCE = 32;

/** Runs `jobs` with at most `limit` under way at once; resolves with their results in order. */
async function inParallel<T>(jobs: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return out;
}

/**
 * Stages blobs in the sandbox for a restore (helper op `stage`), at most
 * {@link BLOB_CHUNK_BYTES} per request, the blobs of a request read from the store at once;
 * resolves with `[hash, size]` of each, as the restore request names them. `blobs` gives
 * each blob's size as its manifest records it.
 */
export async function stageBlobs(
  call: HelperCall,
  store: SnapshotStore,
  blobs: readonly { readonly hash: string; readonly size: number }[],
): Promise<[string, number][]> {
  for (const chunk of blobChunks(blobs)) await call('stage', { parts: chunk }, await readChunk(store, chunk));
  return blobs.map((b) => [b.hash, b.size]);
}

/** `[hash, offset, length]` of one part of a chunk's payload. */
export type ChunkPart = [string, number, number];

/**
 * The blobs cut into chunks of at most {@link BLOB_CHUNK_BYTES}, planned from their sizes: the
 * `[hash, offset, length]` parts of each chunk, in payload order (a blob of 0 bytes has one).
 */
export function blobChunks(
  blobs: readonly { readonly hash: string; readonly size: number }[],
): ChunkPart[][] {
  const chunks: ChunkPart[][] = [];
  let parts: ChunkPart[] = [];
  let room = BLOB_CHUNK_BYTES;
  for (const { hash, size } of blobs) {
    let off = 0;
    do {
      if (room === 0) {
        chunks.push(parts);
        parts = [];
        room = BLOB_CHUNK_BYTES;
      }
      const n = Math.min(room, size - off);
      parts.push([hash, off, n]);
      room -= n;
      off += n;
    } while (off < size);
  }
  if (parts.length) chunks.push(parts);
  return chunks;
}

/**
 * Stage payloads read lately, per store, at most {@link CHUNKS_KEPT} of them: branches
 * forked at once from one step stage the same chunks, read from the store once. Blobs are
 * named by their content, and the helper checks every byte it is sent against the target's
 * hashes, so a payload shared this way is as good as one read for the request.
 */
const chunkCache = new WeakMap<SnapshotStore, Map<string, Promise<Buffer>>>();
const CHUNKS_KEPT = 8;

/** The payload of one chunk (see {@link blobChunks}), read from `store` (kept a while: see chunkCache). */
export function readChunk(store: SnapshotStore, chunk: readonly ChunkPart[]): Promise<Buffer> {
  let cache = chunkCache.get(store);
  if (!cache) chunkCache.set(store, (cache = new Map()));
  const key = chunk.map((p) => p.join(':')).join(',');
  const kept = cache.get(key);
  if (kept) return kept;
  const read = (async () => {
    const data = await inParallel(
      chunk.map(
        ([hash, off, n]) =>
          () =>
            readRange(store, hash, off, n),
      ),
      READS_AT_ONCE,
    );
    for (let i = 0; i < chunk.length; i++)
      if (data[i].length !== chunk[i][2])
        throw new Error(
          `stored blob ${chunk[i][0]} has ${data[i].length} bytes at offset ${chunk[i][1]}, the manifest says ${chunk[i][2]}`,
        );
    return Buffer.concat(data);
  })();
  cache.set(key, read);
  // A failed read is not kept: the next restore reads again.
  read.catch(() => cache.delete(key));
  while (cache.size > CHUNKS_KEPT) cache.delete(cache.keys().next().value!);
  return read;
}
