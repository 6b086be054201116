import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/jcs.js';
import type { SnapshotManifest, SnapshotStore } from '../../electron/engine/sandbox/snapshot-store.js';

/**
 * A snapshot store in a Map, for the conformance suite's fast runs: manifest ids are
 * the sha256 of the manifest's canonical JSON, as the interface says.
 */
export function mapSnapshotStore(): SnapshotStore {
  const blobs = new Map<string, Uint8Array>();
  const manifests = new Map<string, SnapshotManifest>();
  return {
    hasBlob: async (hash) => blobs.has(hash),
    putBlob: async (hash, content) => {
      blobs.set(hash, Uint8Array.from(content));
    },
    getBlob: async (hash) => {
      const blob = blobs.get(hash);
      if (!blob) throw new Error(`blob ${hash} is not in the store`);
      return Uint8Array.from(blob);
    },
    putManifest: async (manifest) => {
      const id = createHash('sha256').update(canonicalJson(manifest)).digest('hex');
      manifests.set(id, structuredClone(manifest));
      return id;
    },
    getManifest: async (id) => {
      const manifest = manifests.get(id);
      if (!manifest) throw new Error(`manifest ${id} is not in the store`);
      return structuredClone(manifest);
    },
  };
}
