import type { FileChange } from '../../shared/contract/index.js';
import type { ChangedPath } from '../../shared/trace-events.js';
import type { SnapshotManifest, SnapshotStore } from '../engine/sandbox/snapshot-store.js';
import { textAt } from '../engine/sandbox/snapshot-text.js';

export { textAt, type SnapshotText } from '../engine/sandbox/snapshot-text.js';

/** A manifest by id, or null for no id. */
export async function manifestOf(store: SnapshotStore, id: string | null): Promise<SnapshotManifest | null> {
  return id ? store.getManifest(id) : null;
}

/** The paths whose content differs between two manifests (sorted), with which side has them. */
export function diffManifests(
  a: SnapshotManifest | null,
  b: SnapshotManifest | null,
): { path: string; status: 'only_a' | 'only_b' | 'differ' }[] {
  const key = (e: SnapshotManifest['entries'][number]) => `${e.type}:${e.mode}:${e.hash ?? e.target ?? ''}`;
  const left = new Map((a?.entries ?? []).filter((e) => e.type !== 'dir').map((e) => [e.path, key(e)]));
  const right = new Map((b?.entries ?? []).filter((e) => e.type !== 'dir').map((e) => [e.path, key(e)]));
  const out: { path: string; status: 'only_a' | 'only_b' | 'differ' }[] = [];
  for (const [path, k] of left) {
    if (!right.has(path)) out.push({ path, status: 'only_a' });
    else if (right.get(path) !== k) out.push({ path, status: 'differ' });
  }
  for (const path of right.keys()) if (!left.has(path)) out.push({ path, status: 'only_b' });
  return out.sort((x, y) => (x.path < y.path ? -1 : 1));
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
