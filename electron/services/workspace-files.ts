import type { FileChange } from '../../shared/contract/index.js';
import type { ChangedPath } from '../../shared/trace-events.js';
import type { SnapshotManifest, SnapshotStore } from '../engine/sandbox/snapshot-store.js';

/** Text larger than this is shown as a notice, not loaded into the diff editor. */
const MAX_TEXT_BYTES = 256 * 1024;

/** A file's text in one snapshot: null when absent; `binary` when it is not UTF-8 text. */
export interface SnapshotText {
  readonly text: string | null;
  readonly binary: boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads one file of a manifest as text (absent, binary and oversized files say so). */
export async function textAt(
  store: SnapshotStore,
  manifest: SnapshotManifest | null,
  path: string,
): Promise<SnapshotText> {
  const entry = manifest?.entries.find((e) => e.path === path);
  if (!entry) return { text: null, binary: false };
  if (entry.type === 'symlink') return { text: `→ ${entry.target ?? ''}`, binary: false };
  if (entry.type !== 'file' || !entry.hash) return { text: null, binary: false };
  if (entry.size > MAX_TEXT_BYTES) return { text: `(${entry.size} bytes: too large to show)`, binary: true };
  const bytes = await store.getBlob(entry.hash);
  if (bytes.includes(0)) return { text: null, binary: true };
  try {
    return { text: decoder.decode(bytes), binary: false };
  } catch {
    // Not UTF-8: the inspector shows it as binary rather than as mojibake.
    return { text: null, binary: true };
  }
}

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
