/** A workspace entry as the tree hash sees it. Paths are relative to /workspace, `/`-separated. */
export interface TreeEntry {
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
 * The text whose sha256 is the tree hash: one line per entry, sorted by path (code
 * units), `type mode path size content-hash|link-target`, mode as 4 octal digits, dirs
 * with size 0 and `-`; backslash and newline in paths escaped as `\\` and `\n`. No mtimes.
 * The in-container helper builds the same text byte for byte.
 */
export function treeHashText(entries: readonly TreeEntry[]): string {
  return treeHashLines(entries).join('');
}

function byPath(a: TreeEntry, b: TreeEntry): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

/**
 * `entries` sorted by path (code units): themselves when they are already (a snapshot's
 * are, and one pass to see so costs a fraction of a sort), else a sorted copy.
 */
export function sortedByPath<E extends TreeEntry>(entries: readonly E[]): readonly E[] {
  for (let i = 1; i < entries.length; i++)
    if (entries[i - 1].path >= entries[i].path) return [...entries].sort(byPath);
  return entries;
}

/** The lines of {@link treeHashText}, in order (their concatenation is the text). */
export function treeHashLines(entries: readonly TreeEntry[]): string[] {
  return sortedByPath(entries).map((e) => {
    let line = LINES.get(e);
    if (line === undefined) {
      const mode = (e.mode & 0o7777).toString(8).padStart(4, '0');
      const path = e.path.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
      const size = e.type === 'dir' ? 0 : e.size;
      const content = e.type === 'file' ? e.hash : e.type === 'symlink' ? e.target : '-';
      line = `${e.type} ${mode} ${path} ${size} ${content}\n`;
      LINES.set(e, line);
    }
    return line;
  });
}

/**
 * Each entry's line, kept while the entry lives: a snapshot after a small change reuses
 * every unchanged entry object of the one before, so only the changed lines are written
 * again. Entries are readonly; one changed in place would keep its old line.
 */
const LINES = new WeakMap<TreeEntry, string>();
