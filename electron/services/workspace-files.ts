import type { FileChange } from '../../shared/contract/index.js';
import type { ChangedPath } from '../../shared/trace-events.js';
import type { SnapshotManifest, SnapshotStore } from '../engine/sandbox/snapshot-store.js';
import { textAt } from '../engine/sandbox/snapshot-text.js';
import { diffFiles } from '../engine/sandbox/manifest.js';

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
      return {
        path: c.path,
        change: c.change,
        before: x.text,
        after: y.text,
        binary: x.binary || y.binary,
        ...(x.folder || y.folder ? { folder: true } : {}),
      };
    }),
  );
}

/**
 * The files step 0 shows, its Files tab and its timeline row alike ("setup · 4 files" over
 * "Files (4)"): what setup changed, then every other file of the workspace after it. Snapshot
 * 0's `changed` is only what changed since the sandbox's own start: a project folder's files
 * (restored as the start's baseline), a Harbor image's and any left by an earlier episode
 * (state_leak) are not in it, and the row said "0 files" of a folder of 4.
 */
export function setupChanges(changed: readonly ChangedPath[], after: SnapshotManifest | null): ChangedPath[] {
  const listed = new Set(changed.map((c) => c.path));
  const rest = diffFiles(null, after)
    .filter((d) => !listed.has(d.path))
    .map((d) => ({ path: d.path, change: 'added' as const }));
  return [...changed, ...rest];
}
