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
