import type { ChangedPath } from '../../../shared/trace-events.js';
import { treeHashText } from '../../../shared/tree-hash.js';
import type { ManifestEntry } from './snapshot-store.js';
import { sha256Hex } from '../sha256.js';

/** sha256 hex of the tree hash text of `entries`. */
export function treeHashOf(entries: readonly ManifestEntry[]): string {
  return sha256Hex(treeHashText(entries));
}

/** Added/modified/deleted entries between two listings. */
export function diffEntries(
  before: readonly ManifestEntry[],
  after: readonly ManifestEntry[],
): ChangedPath[] {
  const old = new Map(before.map((e) => [e.path, e]));
  const changed: ChangedPath[] = [];
  for (const e of after) {
    const o = old.get(e.path);
    old.delete(e.path);
    if (!o) changed.push({ path: e.path, change: 'added' });
    else if (
      o.type !== e.type ||
      o.mode !== e.mode ||
      o.size !== e.size ||
      o.hash !== e.hash ||
      o.target !== e.target
    )
      changed.push({ path: e.path, change: 'modified' });
  }
  for (const p of old.keys()) changed.push({ path: p, change: 'deleted' });
  return changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
