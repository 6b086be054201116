import type { ChangedPath } from '../../../shared/trace-events.js';
import { treeHashLines } from '../../../shared/tree-hash.js';
import type { ManifestEntry, SnapshotManifest } from './snapshot-store.js';
import { sha256HexOfParts } from '../sha256.js';
import { canonicalJson } from '../../../shared/jcs.js';

/** sha256 hex of the tree hash text of `entries`. */
export function treeHashOf(entries: readonly ManifestEntry[]): string {
  return sha256HexOfParts(treeHashLines(entries));
}

/**
 * canonicalJson(manifest), the text a manifest's id is the sha256 of, in parts (see
 * textBatches: the text of a 1,000-file workspace is over 128 KB, costly to make whole).
 * Each entry's JSON is kept while the entry lives: a snapshot after a small change reuses
 * every unchanged entry object of the one before (see treeHashText's lines). A manifest
 * with other fields than entries and treeHash is one part.
 */
export function manifestParts(manifest: SnapshotManifest): string[] {
  const keys = Object.keys(manifest);
  if (
    keys.length !== 2 ||
    !('entries' in manifest) ||
    !('treeHash' in manifest) ||
    !Array.isArray(manifest.entries) ||
    typeof manifest.treeHash !== 'string'
  )
    return [canonicalJson(manifest)];
  // JCS orders keys by code unit: "entries" < "treeHash".
  const parts = ['{"entries":['];
  manifest.entries.forEach((e, i) => {
    let text = ENTRY_JSON.get(e);
    if (text === undefined) {
      text = canonicalJson(e);
      ENTRY_JSON.set(e, text);
    }
    if (i > 0) parts.push(',');
    parts.push(text);
  });
  parts.push(`],"treeHash":${JSON.stringify(manifest.treeHash)}}`);
  return parts;
}

/** The id of a manifest: sha256 of its canonical (JCS) JSON. */
export function manifestId(manifest: SnapshotManifest): string {
  return sha256HexOfParts(manifestParts(manifest));
}

const ENTRY_JSON = new WeakMap<ManifestEntry, string>();

/** Whether two entries describe the same thing (type, mode, size, content or link target). */
export function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  return (
    a.type === b.type && a.mode === b.mode && a.size === b.size && a.hash === b.hash && a.target === b.target
  );
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
    else if (!sameEntry(o, e)) changed.push({ path: e.path, change: 'modified' });
  }
  for (const p of old.keys()) changed.push({ path: p, change: 'deleted' });
  return changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The files that differ between two workspaces (sorted; `added`: only `after` has it).
 * Directories differ only through their files; a file's content, mode, size or kind counts.
 */
export function diffFiles(before: SnapshotManifest | null, after: SnapshotManifest | null): ChangedPath[] {
  const files = (m: SnapshotManifest | null) => (m?.entries ?? []).filter((e) => e.type !== 'dir');
  return diffEntries(files(before), files(after));
}

/** Which side of a two-workspace comparison has a differing file. */
export type FileDiffStatus = 'only_a' | 'only_b' | 'differ';

/** The files that differ between workspaces A and B (sorted), with which side has them. */
export function diffManifests(
  a: SnapshotManifest | null,
  b: SnapshotManifest | null,
): { path: string; status: FileDiffStatus }[] {
  const status = { added: 'only_b', deleted: 'only_a', modified: 'differ' } as const;
  return diffFiles(a, b).map((c) => ({ path: c.path, status: status[c.change] }));
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * What makes a manifest unsafe or malformed, or undefined when it is sound. Every path must
 * stay inside /workspace as written: relative, `/`-separated, no empty, `.` or `..` parts,
 * no NUL, listed once, and never below an entry the manifest lists as a symlink or file (so a
 * restore never writes through a symlink). Checked where a manifest enters (bundle import) and again
 * before a restore; the helper checks once more inside the container.
 */
export function manifestProblem(manifest: SnapshotManifest): string | undefined {
  if (typeof manifest !== 'object' || manifest === null || !Array.isArray(manifest.entries))
    return 'it has no entries list';
  // Ten branches forked from one step restore the same manifest object: checked once.
  if (SOUND.has(manifest)) return undefined;
  const problem = firstProblem(manifest.entries as unknown[]);
  if (problem === undefined) SOUND.add(manifest);
  return problem;
}

/** Manifests found sound (they are readonly: one is not changed after its check). */
const SOUND = new WeakSet<SnapshotManifest>();

/** A path with an empty, `.` or `..` part (a leading `/` is an empty first part). */
const NOT_PLAIN = /(?:^|\/)\.{0,2}(?:\/|$)/;

function firstProblem(entries: readonly unknown[]): string | undefined {
  const types = new Map<string, ManifestEntry['type']>();
  for (const e of entries) {
    const entry = (e ?? {}) as Partial<ManifestEntry>;
    const path = entry.path;
    if (typeof path !== 'string') return `entry ${JSON.stringify(e)} has no path`;
    if (path.startsWith('/'))
      return `entry ${JSON.stringify(path)} is an absolute path; paths are relative to /workspace`;
    if (path.includes('\0') || NOT_PLAIN.test(path))
      return `entry ${JSON.stringify(path)} is not a plain relative path (it has empty, \`.\` or \`..\` parts)`;
    const type = entry.type;
    if (type !== 'file' && type !== 'dir' && type !== 'symlink')
      return `entry ${JSON.stringify(path)} has an unknown type ${JSON.stringify(type)}`;
    if (type === 'file' && !SHA256.test(entry.hash ?? ''))
      return `entry ${JSON.stringify(path)} has no sha256 content hash`;
    const mode = entry.mode;
    if (!Number.isInteger(mode) || (mode as number) < 0 || (mode as number) > 0o7777)
      return `entry ${JSON.stringify(path)} has an invalid mode`;
    if (types.has(path)) return `entry ${JSON.stringify(path)} is listed twice`;
    types.set(path, type);
  }
  for (const path of types.keys()) {
    // Every listed ancestor must be a directory: a path below a symlink (or a file) would
    // be written through it. (Unlisted parents are the restore's to refuse.) Up to the
    // nearest listed one: a directory, whose own ancestors its own entry's check covers.
    for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
      const parent = path.slice(0, cut);
      const type = types.get(parent);
      if (type === undefined) continue;
      if (type !== 'dir')
        return `entry ${JSON.stringify(path)} lies below ${JSON.stringify(parent)}, a ${type} in the manifest (a symlinked parent is never followed)`;
      break;
    }
  }
  return undefined;
}
