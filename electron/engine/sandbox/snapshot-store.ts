/** One entry of a snapshot manifest. Paths are relative to /workspace, `/`-separated. */
export interface ManifestEntry {
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink';
  /** Permission bits, e.g. 0o644. */
  readonly mode: number;
  readonly size: number;
  /** sha256 hex of the content (files only). */
  readonly hash?: string;
  /** Link target (symlinks only). */
  readonly target?: string;
}

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
