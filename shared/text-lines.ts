/**
 * A changed file's two sides as a person reads them in a diff: a final newline ends the last
 * line, it does not start an empty one. Dropped when every side there is ends with one (a side
 * that has one and another that lacks it keep theirs, so that difference still shows): a file
 * ending in a newline drew an empty last line, a `-` and `+` pair or a bare line number.
 * Null is a side that is not there (a file added or removed).
 */
export function diffSides(before: string | null, after: string | null): [string | null, string | null] {
  const sides = [before, after].filter((s): s is string => s !== null && s !== '');
  if (sides.length === 0 || !sides.every((s) => s.endsWith('\n'))) return [before, after];
  const drop = (s: string | null) => (s === null || s === '' ? s : s.slice(0, -1));
  return [drop(before), drop(after)];
}

/** What a folder's change says in a step's Files tab: its files are listed as changes of their own. */
export function folderChangeText(path: string, change: 'added' | 'modified' | 'deleted', at: string): string {
  const said = { added: 'new', modified: 'changed', deleted: 'removed' }[change];
  return `${path}/ is a folder, ${said} ${at}: the files in it are listed on their own.`;
}
