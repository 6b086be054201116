import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { diffEntries, manifestParts, treeHashOf } from '../../electron/engine/sandbox/manifest.js';
import { treeHashText, type TreeEntry } from '../../shared/tree-hash.js';
import { manifestId } from '../../electron/engine/sandbox/manifest.js';
import { readFileSync } from 'node:fs';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import { sha256Hex } from '../../electron/engine/sha256.js';
import type { SnapshotManifest, SnapshotStore } from '../../electron/engine/sandbox/snapshot-store.js';
import { canonicalJson } from '../../shared/jcs.js';

const hello = new TextEncoder().encode('hello');
const HELLO = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';

const entries = [
  { path: 'b.txt', type: 'file', mode: 0o644, size: 5, hash: HELLO },
  { path: 'a', type: 'dir', mode: 0o755, size: 0 },
  { path: 'a/l', type: 'symlink', mode: 0o777, size: 5, target: 'b.txt' },
] as const;
const manifest: SnapshotManifest = { treeHash: treeHashOf(entries), entries };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepbox-store-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores: [string, () => SnapshotStore][] = [
  ['memory', () => new MemorySnapshotStore()],
  ['disk', () => new DiskSnapshotStore(join(dir, `s${Math.random().toString(36).slice(2)}`))],
];

describe.each(stores)('%s snapshot store', (_name, make) => {
  it('stores blobs by hash and refuses content that does not match', async () => {
    const store = make();
    expect(await store.hasBlob(HELLO)).toBe(false);
    await store.putBlob(HELLO, hello);
    expect(await store.hasBlob(HELLO)).toBe(true);
    expect(Buffer.from(await store.getBlob(HELLO)).toString()).toBe('hello');
    await expect(store.putBlob(HELLO, new TextEncoder().encode('hellO'))).rejects.toThrow(/hashes to/);
    await expect(store.getBlob(sha256Hex('absent'))).rejects.toThrow();
  });

  it('names a manifest by the sha256 of its canonical JSON and returns it intact', async () => {
    const store = make();
    const id = await store.putManifest(manifest);
    expect(id).toBe(sha256Hex(canonicalJson(manifest)));
    expect(id).toBe(manifestId({ entries: manifest.entries, treeHash: manifest.treeHash }));
    expect(await store.getManifest(id)).toEqual(manifest);
    expect(await store.putManifest(manifest)).toBe(id);
  });

  it('names and returns a large manifest the same (its text hashed and written in batches)', async () => {
    // 1,000 files (~136 KB of JSON, several batches) and 10,000 (over 1 MB: the async write).
    for (const n of [1000, 10_000]) {
      const store = make();
      const many: TreeEntry[] = Array.from({ length: n }, (_, i) => ({
        path: `d${i % 20}/f${i}-é.bin`,
        type: 'file',
        mode: 0o644,
        size: i,
        hash: sha256Hex(String(i)),
      }));
      const big: SnapshotManifest = { treeHash: treeHashOf(many), entries: many };
      expect(big.treeHash).toBe(sha256Hex(treeHashText(many)));
      const id = await store.putManifest(big);
      expect(id).toBe(sha256Hex(canonicalJson(big)));
      expect(await store.getManifest(id)).toEqual(big);
      if (store instanceof DiskSnapshotStore)
        expect(readFileSync(join(store.dir, 'manifests', `${id}.json`), 'utf8')).toBe(canonicalJson(big));
    }
  });

  it('lists its blobs with their sizes and its manifests, and removes a blob', async () => {
    const store = make();
    expect(await store.listBlobs()).toEqual([]);
    expect(await store.listManifests()).toEqual([]);
    const other = new TextEncoder().encode('other blob');
    await store.putBlob(HELLO, hello);
    await store.putBlob(sha256Hex(other), other);
    const id = await store.putManifest(manifest);
    const byHash = (a: { hash: string }, b: { hash: string }) => a.hash.localeCompare(b.hash);
    expect([...(await store.listBlobs())].sort(byHash)).toEqual(
      [
        { hash: HELLO, size: 5 },
        { hash: sha256Hex(other), size: other.length },
      ].sort(byHash),
    );
    expect(await store.listManifests()).toEqual([id]);
    await store.removeBlob(sha256Hex(other));
    expect(await store.hasBlob(sha256Hex(other))).toBe(false);
    expect(await store.listBlobs()).toEqual([{ hash: HELLO, size: 5 }]);
    await store.removeBlob(sha256Hex(other));
    expect(await store.hasBlob(HELLO)).toBe(true);
  });
});

describe('disk snapshot store layout', () => {
  it('keeps blobs under blobs/ab/cdef… and manifests under manifests/<id>.json, with no temp files left', async () => {
    const root = join(dir, 'layout');
    const store = new DiskSnapshotStore(root);
    await store.putBlob(HELLO, hello);
    const id = await store.putManifest(manifest);
    expect(await readdir(join(root, 'blobs', '2c'))).toEqual([HELLO.slice(2)]);
    expect(await readdir(join(root, 'manifests'))).toEqual([`${id}.json`]);
    // A second store on the same directory sees what the first wrote.
    expect(await new DiskSnapshotStore(root).hasBlob(HELLO)).toBe(true);
  });

  it('refuses tampered bytes on read, naming the damaged file (never hands them to a restore)', async () => {
    const store = new DiskSnapshotStore(join(dir, 'tamper'));
    await store.putBlob(HELLO, hello);
    await writeFile(store.blobPath(HELLO), 'HELLO');
    await expect(store.getBlob(HELLO)).rejects.toThrow(
      `snapshot blob ${store.blobPath(HELLO)} is damaged: its content hashes to`,
    );
  });

  it('lists a partial write an interrupted process left, so it can be removed', async () => {
    const root = join(dir, 'partial');
    const store = new DiskSnapshotStore(root);
    await store.putBlob(HELLO, hello);
    const partial = `${HELLO.slice(2)}.4242.0badf00d.tmp`;
    await writeFile(join(root, 'blobs', '2c', partial), 'hel');
    expect(await store.listBlobs()).toContainEqual({ hash: `2c${partial}`, size: 3 });
    await store.removeBlob(`2c${partial}`);
    expect(await readdir(join(root, 'blobs', '2c'))).toEqual([HELLO.slice(2)]);
    await expect(store.removeBlob('../../etc/passwd')).rejects.toThrow(/sha256/);
  });

  it('keeps many small blobs stored at once in one pack: read whole and in ranges, listed, found by another store, removed with its last blob', async () => {
    const root = join(dir, 'pack');
    const store = new DiskSnapshotStore(root);
    const blobs = Array.from({ length: 40 }, (_, i) => Buffer.from(`blob number ${i} `.repeat(i + 1)));
    const own = blobs.map((content) => ({ hash: sha256Hex(content), content }));
    await store.putOwnBlobs(own);
    const packs = await readdir(join(root, 'packs'));
    expect(packs).toHaveLength(1);
    expect(packs[0]).toMatch(/^[0-9a-f]{64}\.pack$/);
    // No file per blob.
    expect(await readdir(root)).not.toContain('blobs');
    const other = new DiskSnapshotStore(root);
    for (const b of own) {
      expect(await other.hasBlob(b.hash)).toBe(true);
      expect(Buffer.from(await other.getBlob(b.hash)).equals(b.content)).toBe(true);
    }
    expect(Buffer.from(await other.readBlobRange(own[9].hash, 3, 5)).toString()).toBe(
      blobs[9].subarray(3, 8).toString(),
    );
    expect((await other.listBlobs()).map((b) => [b.hash, b.size]).sort()).toEqual(
      own.map((b) => [b.hash, b.content.length]).sort(),
    );
    // Removed one by one (as gc does): gone for a store opened later too; the pack with the last one.
    for (const b of own.slice(0, 39)) await other.removeBlob(b.hash);
    const later = new DiskSnapshotStore(root);
    expect(await later.hasBlob(own[0].hash)).toBe(false);
    expect(await later.hasBlob(own[39].hash)).toBe(true);
    await later.removeBlob(own[39].hash);
    expect(await readdir(join(root, 'packs'))).toEqual([]);
    expect(await later.listBlobs()).toEqual([]);
  });

  it('refuses a packed blob whose bytes were tampered with, naming the pack', async () => {
    const root = join(dir, 'pack-tamper');
    const store = new DiskSnapshotStore(root);
    const own = Array.from({ length: 20 }, (_, i) => {
      const content = Buffer.from(`content ${i}`);
      return { hash: sha256Hex(content), content };
    });
    await store.putOwnBlobs(own);
    const [pack] = await readdir(join(root, 'packs'));
    const path = join(root, 'packs', pack);
    const bytes = readFileSync(path);
    bytes[bytes.length - 1] ^= 1;
    await writeFile(path, bytes);
    await expect(new DiskSnapshotStore(root).getBlob(own[19].hash)).rejects.toThrow(
      `snapshot blob ${path} is damaged: its content hashes to`,
    );
    expect(Buffer.from(await new DiskSnapshotStore(root).getBlob(own[0].hash)).toString()).toBe('content 0');
  });

  it('rejects names that are not sha256 digests (no path traversal)', async () => {
    const store = new DiskSnapshotStore(join(dir, 'names'));
    await expect(store.hasBlob('../../etc/passwd')).rejects.toThrow(/sha256/);
    await expect(store.getManifest('../x')).rejects.toThrow(/sha256/);
  });
});

describe('snapshot diff and tree hash', () => {
  it('lists added, modified and deleted paths', () => {
    const after = [
      { path: 'a', type: 'dir', mode: 0o755, size: 0 },
      { path: 'a/l', type: 'symlink', mode: 0o777, size: 1, target: 'c' },
      { path: 'c', type: 'file', mode: 0o644, size: 0, hash: sha256Hex('') },
    ] as const;
    expect(diffEntries(entries, after)).toEqual([
      { path: 'a/l', change: 'modified' },
      { path: 'b.txt', change: 'deleted' },
      { path: 'c', change: 'added' },
    ]);
  });

  // The texts keep each entry's line and JSON while the entry lives (a snapshot after a small
  // change reuses the unchanged entry objects): what they give must be what a fresh
  // computation gives, whichever entries were seen before, in whatever manifest.
  it('gives the same tree text and canonical manifest JSON as fresh, with entries reused across manifests', () => {
    const fresh = (es: readonly TreeEntry[]) =>
      [...es]
        .sort((a, b) => (a.path < b.path ? -1 : 1))
        .map((e) => {
          const content = e.type === 'file' ? e.hash : e.type === 'symlink' ? e.target : '-';
          return `${e.type} ${e.mode.toString(8).padStart(4, '0')} ${e.path.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')} ${e.type === 'dir' ? 0 : e.size} ${content}\n`;
        })
        .join('');
    const odd = {
      path: 'we"ird\\na\nme',
      type: 'file',
      mode: 0o600,
      size: 3,
      hash: sha256Hex('abc'),
    } as const;
    const first: SnapshotManifest = { treeHash: treeHashOf(entries), entries };
    expect(manifestParts(first).join('')).toBe(canonicalJson(first));
    expect(treeHashText(entries)).toBe(fresh(entries));
    // The same entry objects again, one replaced, one added, order changed.
    const later = [entries[2], odd, entries[1]] as const;
    const second: SnapshotManifest = { treeHash: treeHashOf(later), entries: later };
    expect(treeHashText(later)).toBe(fresh(later));
    expect(manifestParts(second).join('')).toBe(canonicalJson(second));
    expect(manifestId(second)).toBe(sha256Hex(canonicalJson(second)));
    // A manifest with a field beyond entries and treeHash is written whole.
    const extra = { ...second, note: 'x' } as SnapshotManifest;
    expect(manifestParts(extra).join('')).toBe(canonicalJson(extra));
  });

  it('is independent of entry order and sensitive to modes', () => {
    expect(treeHashOf([...entries].reverse())).toBe(manifest.treeHash);
    expect(treeHashOf([{ ...entries[0], mode: 0o755 }, entries[1], entries[2]])).not.toBe(manifest.treeHash);
  });
});
