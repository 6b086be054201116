import { sha256Hex } from '../sha256.js';
import { treeHashOf } from './manifest.js';
import { MemorySnapshotStore } from './memory-snapshot-store.js';
import type { ManifestEntry, SnapshotManifest } from './snapshot-store.js';

/** One file, folder or symlink to put in a workspace, by its path relative to the working directory. */
export interface SeedFile {
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink';
  /** Permission bits; only the 0o777 ones are kept (no setuid in a workspace). */
  readonly mode: number;
  /** Files: the bytes. */
  readonly content?: Uint8Array;
  /** Symlinks: the target. */
  readonly target?: string;
}

/**
 * A tree to start a workspace from (the image's own files at the working directory, a
 * project folder's): a manifest and its blobs, put into a sandbox with the one restore
 * every snapshot goes through (`sandbox.restore(seed.store, seed.manifest)`), so the same
 * checks (paths inside the workspace, no write through a symlink, hashes recomputed inside)
 * hold for it.
 */
export interface WorkspaceSeed {
  readonly store: MemorySnapshotStore;
  readonly manifest: SnapshotManifest;
  /** Bytes of file content in it. */
  readonly bytes: number;
}

/** Whether a seed puts nothing in the workspace. */
export function emptySeed(seed: WorkspaceSeed | null | undefined): boolean {
  return !seed || seed.manifest.entries.length === 0;
}

/**
 * The seed of a list of files: every parent folder listed (0755 unless given), files'
 * blobs stored by hash. Later entries for a path replace earlier ones.
 */
export async function seedOf(files: Iterable<SeedFile>): Promise<WorkspaceSeed> {
  const store = new MemorySnapshotStore();
  const byPath = new Map<string, ManifestEntry>();
  let bytes = 0;
  for (const f of files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!byPath.has(dir)) byPath.set(dir, { path: dir, type: 'dir', mode: 0o755, size: 0 });
    }
    const mode = f.mode & 0o777;
    if (f.type === 'file') {
      const content = f.content ?? new Uint8Array();
      const hash = sha256Hex(content);
      if (!(await store.hasBlob(hash))) await store.putBlob(hash, content);
      bytes += content.byteLength;
      byPath.set(f.path, { path: f.path, type: 'file', mode, size: content.byteLength, hash });
    } else if (f.type === 'symlink') {
      const target = f.target ?? '';
      byPath.set(f.path, {
        path: f.path,
        type: 'symlink',
        mode: 0o777,
        size: Buffer.byteLength(target),
        target,
      });
    } else byPath.set(f.path, { path: f.path, type: 'dir', mode, size: 0 });
  }
  const entries = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { store, manifest: { treeHash: treeHashOf(entries), entries }, bytes };
}

/**
 * `top` laid over `base` (a project folder over the image's own files): `top`'s entries win,
 * and a path `top` holds as a file or symlink hides whatever `base` has below it.
 */
export function overlayEntries(
  base: readonly ManifestEntry[],
  top: readonly ManifestEntry[],
): ManifestEntry[] {
  const byPath = new Map<string, ManifestEntry>();
  for (const e of base) byPath.set(e.path, e);
  const hidden = top.filter((e) => e.type !== 'dir').map((e) => e.path + '/');
  for (const e of top) byPath.set(e.path, e);
  const topPaths = new Set(top.map((e) => e.path));
  const kept = [...byPath.values()].filter(
    (e) => topPaths.has(e.path) || !hidden.some((h) => e.path.startsWith(h)),
  );
  return kept.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The manifest of `top` over a seed, in `store`: the seed's blobs that `store` lacks are
 * copied into it, so one restore from `store` puts both in place.
 */
export async function overSeed(
  seed: WorkspaceSeed,
  top: SnapshotManifest,
  store: { hasBlob(h: string): Promise<boolean>; putBlob(h: string, c: Uint8Array): Promise<void> },
): Promise<SnapshotManifest> {
  const entries = overlayEntries(seed.manifest.entries, top.entries);
  for (const e of entries)
    if (e.type === 'file' && e.hash && !(await store.hasBlob(e.hash)) && (await seed.store.hasBlob(e.hash)))
      await store.putBlob(e.hash, await seed.store.getBlob(e.hash));
  return { treeHash: treeHashOf(entries), entries };
}
