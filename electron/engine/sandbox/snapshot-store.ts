import type { TreeEntry } from '../../../shared/tree-hash.js';

/**
 * One entry of a snapshot manifest: the workspace entry the tree hash is computed over
 * (one type, so a manifest's entries always hash as they are).
 */
export type ManifestEntry = TreeEntry;

/**
 * A self-contained description of /workspace: every entry, plus the tree hash
 * (sha256 over sorted `type mode path size content-hash|link-target` lines, no mtimes).
 */
export interface SnapshotManifest {
  readonly treeHash: string;
  readonly entries: readonly ManifestEntry[];
}

/** One blob a {@link SnapshotStore} holds, as {@link SnapshotStore.listBlobs} reports it. */
export interface StoredBlob {
  /**
   * The blob's key: its sha256 hex, or, for a disk store, the name of a partial write an
   * interrupted process left behind (`<hash>.<pid>.<rand>.tmp`), which no manifest references.
   */
  readonly hash: string;
  readonly size: number;
}

/** A blob and the hash its holder computed from it (see {@link SnapshotStore.putOwnBlobs}). */
export interface OwnBlob {
  readonly hash: string;
  readonly content: Uint8Array;
}

/** Stores `blobs` (hashed by their holder) the fastest way `store` offers. */
export async function putOwnBlobs(store: SnapshotStore, blobs: readonly OwnBlob[]): Promise<void> {
  if (store.putOwnBlobs) return store.putOwnBlobs(blobs);
  for (const b of blobs) await store.putBlob(b.hash, b.content);
}

/** A blob being stored chunk by chunk; its content is checked against its hash at commit. */
export interface BlobWriter {
  write(chunk: Uint8Array): Promise<void>;
  /** Stores the blob; rejects (and stores nothing) when the chunks do not hash to its name. */
  commit(): Promise<void>;
  /** Drops what was written. */
  abort(): Promise<void>;
}

/** The host-side content-addressed store of blobs and manifests for one episode. */
export interface SnapshotStore {
  hasBlob(hash: string): Promise<boolean>;
  putBlob(hash: string, content: Uint8Array): Promise<void>;
  getBlob(hash: string): Promise<Uint8Array>;
  /**
   * Stores blobs whose hashes the caller computed from these very bytes, in this process
   * (a folder import hashes what it read once): not hashed again, written many at once off
   * the event loop. Stores without it get one putBlob each.
   */
  putOwnBlobs?(blobs: readonly OwnBlob[]): Promise<void>;
  /** Streams a blob in with bounded memory (large files); stores without it get one putBlob. */
  openBlobWriter?(hash: string): Promise<BlobWriter>;
  /** Bytes [offset, offset + length) of a blob, fewer at its end; stores without it are read whole. */
  readBlobRange?(hash: string, offset: number, length: number): Promise<Uint8Array>;
  /** Stores a manifest and returns its id (the sha256 of its canonical JSON). */
  putManifest(manifest: SnapshotManifest): Promise<string>;
  getManifest(id: string): Promise<SnapshotManifest>;
  /** Every blob held, with its size (garbage collection finds the unreferenced ones). */
  listBlobs(): Promise<readonly StoredBlob[]>;
  /** Deletes a blob listed by {@link listBlobs}; absent blobs are no error. */
  removeBlob(hash: string): Promise<void>;
  /** The ids of every manifest held. */
  listManifests(): Promise<readonly string[]>;
}

/**
 * A snapshot the store cannot give back as recorded: a blob or manifest missing, not
 * parseable, or not hashing to its name. Damage on disk, not a bug: the message names
 * the snapshot and the file; re-importing the episode's bundle is the fix.
 */
export class SnapshotCorruptError extends Error {
  readonly code = 'snapshot_corrupt';
  override readonly name = 'SnapshotCorruptError';
}
