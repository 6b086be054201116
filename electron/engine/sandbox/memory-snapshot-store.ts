import { manifestId } from './manifest.js';
import type { SnapshotManifest, SnapshotStore, StoredBlob } from './snapshot-store.js';
import { sha256Hex } from '../sha256.js';

/** A {@link SnapshotStore} in memory (tests, short-lived episodes). Blobs are verified on put. */
export class MemorySnapshotStore implements SnapshotStore {
  private readonly blobs = new Map<string, Uint8Array>();
  private readonly manifests = new Map<string, SnapshotManifest>();

  /** Whether the store holds a blob. */
  async hasBlob(hash: string): Promise<boolean> {
    return this.blobs.has(hash);
  }

  /** Stores a blob after checking that its content hashes to `hash`. */
  async putBlob(hash: string, content: Uint8Array): Promise<void> {
    const actual = sha256Hex(content);
    if (actual !== hash) throw new Error(`blob content hashes to ${actual}, not ${hash}`);
    // Copy: the caller's buffer may be a view into a larger, reused one.
    this.blobs.set(hash, Uint8Array.from(content));
  }

  /** The blob's content; rejects when absent. */
  async getBlob(hash: string): Promise<Uint8Array> {
    const blob = this.blobs.get(hash);
    if (!blob) throw new Error(`blob ${hash} is not in the store`);
    return blob;
  }

  /** Stores a manifest under its canonical id. */
  async putManifest(manifest: SnapshotManifest): Promise<string> {
    const id = manifestId(manifest);
    this.manifests.set(id, manifest);
    return id;
  }

  /** The manifest with `id`; rejects when absent. */
  async getManifest(id: string): Promise<SnapshotManifest> {
    const m = this.manifests.get(id);
    if (!m) throw new Error(`manifest ${id} is not in the store`);
    return m;
  }

  /** Every blob held, with its size. */
  async listBlobs(): Promise<readonly StoredBlob[]> {
    return [...this.blobs].map(([hash, content]) => ({ hash, size: content.byteLength }));
  }

  /** Deletes a blob; absent blobs are no error. */
  async removeBlob(hash: string): Promise<void> {
    this.blobs.delete(hash);
  }

  /** The ids of every manifest held. */
  async listManifests(): Promise<readonly string[]> {
    return [...this.manifests.keys()];
  }

  /** Replaces a stored blob's bytes without checking them (tests of tamper detection). */
  tamper(hash: string, content: Uint8Array): void {
    this.blobs.set(hash, content);
  }
}
