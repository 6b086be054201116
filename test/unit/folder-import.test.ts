import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importFolder } from '../../electron/engine/harness/folder-import.js';
import { listFolder } from '../../electron/engine/harness/folder-listing.js';
import { BLOB_CHUNK_BYTES } from '../../electron/engine/sandbox/blob-transfer.js';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { treeHashOf } from '../../electron/engine/sandbox/manifest.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'stepbox-import-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function write(rel: string, content: Buffer): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), content);
}

/** What a sink received: each blob's bytes as cut from the payloads by the [hash, size] lists. */
function recordingSink() {
  const got: { hash: string; bytes: Buffer }[] = [];
  let calls = 0;
  const sink = async (blobs: readonly (readonly [string, number])[], payload: Uint8Array) => {
    calls++;
    let off = 0;
    for (const [hash, size] of blobs) {
      got.push({ hash, bytes: Buffer.from(payload.subarray(off, off + size)) });
      off += size;
    }
    expect(off).toBe(payload.length);
    expect(payload.length).toBeLessThanOrEqual(BLOB_CHUNK_BYTES);
  };
  return { sink, got, calls: () => calls };
}

describe('importFolder: a project folder into the store and, chunk by chunk, the sandbox', () => {
  it('reads every file once into the store and the sink; repeated content and large files are not sent twice or at all', async () => {
    const small = Array.from({ length: 600 }, (_, i) => Buffer.alloc(10 * 1024, `file ${i}`));
    small.forEach((b, i) => write(`d${i % 7}/f${i}.bin`, b));
    write('same-a.txt', Buffer.from('twice'));
    write('same-b.txt', Buffer.from('twice'));
    write('empty', Buffer.alloc(0));
    const large = Buffer.alloc(BLOB_CHUNK_BYTES + 5, 'L');
    write('big/large.bin', large);
    const store = new MemorySnapshotStore();
    const { sink, got, calls } = recordingSink();
    const imported = await importFolder(listFolder(root), store, sink);

    expect(imported.files).toBe(600 + 4);
    expect(imported.skipped).toEqual([]);
    // Every small blob reached the sink once, as its bytes; the large one only the store.
    const sent = new Map(got.map((g) => [g.hash, g.bytes]));
    expect(got.length).toBe(sent.size);
    for (const [hash, bytes] of sent) expect(sha256(bytes)).toBe(hash);
    expect(sent.has(sha256(Buffer.from('twice')))).toBe(true);
    expect(sent.has(sha256(large))).toBe(false);
    expect(sent.size).toBe(600 + 2);
    expect(calls()).toBeGreaterThan(1); // 6 MB of small files: more than one chunk
    // The store holds every blob of the manifest; the manifest is the folder as it is.
    const files = imported.manifest.entries.filter((e) => e.type === 'file');
    for (const e of files) expect(sha256(await store.getBlob(e.hash!))).toBe(e.hash);
    expect(files.find((e) => e.path === 'big/large.bin')).toMatchObject({
      size: large.length,
      hash: sha256(large),
    });
    expect(imported.manifest.treeHash).toBe(treeHashOf(imported.manifest.entries));
    // With a sink the content is not held for the restore: it reads the store.
    expect(imported.source).toBe(store);
  });

  it('without a sink the content read stays in memory for the one restore that follows', async () => {
    write('a.txt', Buffer.from('alpha'));
    const store = new MemorySnapshotStore();
    const imported = await importFolder(listFolder(root), store);
    expect(imported.source).not.toBe(store);
    expect(Buffer.from(await imported.source.getBlob(sha256(Buffer.from('alpha')))).toString()).toBe('alpha');
  });

  it('a sink that fails gets no more chunks, and the store still gets everything', async () => {
    for (let i = 0; i < 900; i++) write(`f${i}`, Buffer.alloc(10 * 1024, `x${i}`));
    const store = new MemorySnapshotStore();
    let calls = 0;
    const imported = await importFolder(listFolder(root), store, async () => {
      calls++;
      throw new Error('the helper went away');
    });
    expect(imported.files).toBe(900);
    expect(calls).toBeLessThanOrEqual(2); // at most the chunks already under way
    for (const e of imported.manifest.entries) expect(await store.hasBlob(e.hash!)).toBe(true);
  });

  it('a disk store takes blobs hashed by their holder: written whole under their names, no temp file left', async () => {
    const dir = join(root, 'store');
    const store = new DiskSnapshotStore(dir);
    const blobs = ['one', 'two', 'two', 'three'].map((t) => ({
      hash: sha256(Buffer.from(t)),
      content: Buffer.from(t),
    }));
    await store.putOwnBlobs(blobs);
    await store.putOwnBlobs(blobs.slice(0, 1)); // again: no error, same bytes
    for (const b of blobs)
      expect(Buffer.from(await store.getBlob(b.hash)).toString()).toBe(b.content.toString());
    const listed = await store.listBlobs();
    expect(listed.map((b) => b.hash).sort()).toEqual([...new Set(blobs.map((b) => b.hash))].sort());
    expect(listed.some((b) => b.hash.endsWith('.tmp'))).toBe(false);
    expect(readdirSync(join(dir, 'blobs')).length).toBe(3);
  });
});
