import type { SnapshotManifest, SnapshotStore, StoredBlob } from '../sandbox/snapshot-store.js';
import { MemorySnapshotStore } from '../sandbox/memory-snapshot-store.js';

/**
 * Reads through to an episode's store and keeps every write in memory, so a
 * re-execution can snapshot and roll back without adding to the recording.
 */
export class OverlaySnapshotStore implements SnapshotStore {
  private readonly top = new MemorySnapshotStore();

  constructor(private readonly base: SnapshotStore) {}

  async hasBlob(hash: string): Promise<boolean> {
    return (await this.top.hasBlob(hash)) || this.base.hasBlob(hash);
  }

  putBlob(hash: string, content: Uint8Array): Promise<void> {
    return this.top.putBlob(hash, content);
  }

  async getBlob(hash: string): Promise<Uint8Array> {
    return (await this.top.hasBlob(hash)) ? this.top.getBlob(hash) : this.base.getBlob(hash);
  }

  /** Reads the recording's blobs in ranges (bounded memory for large files). */
  async readBlobRange(hash: string, offset: number, length: number): Promise<Uint8Array> {
    if (!(await this.top.hasBlob(hash)) && this.base.readBlobRange)
      return this.base.readBlobRange(hash, offset, length);
    return (await this.getBlob(hash)).subarray(offset, offset + length);
  }

  putManifest(manifest: SnapshotManifest): Promise<string> {
    return this.top.putManifest(manifest);
  }

  async getManifest(id: string): Promise<SnapshotManifest> {
    try {
      return await this.top.getManifest(id);
    } catch {
      // Not written during the re-execution: the recording has it.
      return this.base.getManifest(id);
    }
  }

  async listBlobs(): Promise<readonly StoredBlob[]> {
    const top = await this.top.listBlobs();
    const mine = new Set(top.map((b) => b.hash));
    return [...top, ...(await this.base.listBlobs()).filter((b) => !mine.has(b.hash))];
  }

  /** Drops a blob written during the re-execution; the recording's blobs stay untouched. */
  removeBlob(hash: string): Promise<void> {
    return this.top.removeBlob(hash);
  }

  async listManifests(): Promise<readonly string[]> {
    return [...new Set([...(await this.top.listManifests()), ...(await this.base.listManifests())])];
  }
}
