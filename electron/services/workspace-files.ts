import type { FileChange } from '../../shared/contract/index.js';
import type { ChangedPath } from '../../shared/trace-events.js';
import type { SnapshotManifest, SnapshotStore } from '../engine/sandbox/snapshot-store.js';
import { textAt } from '../engine/sandbox/snapshot-text.js';

export { textAt, type SnapshotText } from '../engine/sandbox/snapshot-text.js';

/** A manifest by id, or null for no id. */
export async function manifestOf(store: SnapshotStore, id: string | null): Promise<SnapshotManifest | null> {
  return id ? store.getManifest(id) : null;
}

/** Changed paths with their text in the manifest before and after (a step's Files tab, a candidate's diff). */
export function fileChanges(
  store: SnapshotStore,
  before: SnapshotManifest | null,
  after: SnapshotManifest | null,
  changed: readonly ChangedPath[],
): Promise<FileChange[]> {
  return Promise.all(
    changed.map(async (c) => {
      const [x, y] = await Promise.all([textAt(store, before, c.path), textAt(store, after, c.path)]);
      return { path: c.path, change: c.change, before: x.text, after: y.text, binary: x.binary || y.binary };
    }),
  );
}
