import { describe, expect, it } from 'vitest';
import { fileViewOf } from '../../renderer/src/model/file-view';

const file = (change: 'added' | 'modified' | 'deleted', before: string | null, after: string | null) => ({
  path: 'greet.py',
  change,
  before,
  after,
  binary: false,
});

describe('the Files tab: how a changed file is shown', () => {
  it('shows a new file whole as added, never as a diff against nothing', () => {
    expect(fileViewOf(file('added', null, 'a\nb\n'), 2)).toEqual({
      kind: 'whole',
      side: 'added',
      // The final newline ends line 2; no empty line 3 is drawn.
      text: 'a\nb',
      caption: 'new at step 2 — 2 lines, all added',
    });
    expect(fileViewOf(file('added', null, 'x'), 0)).toMatchObject({
      side: 'added',
      caption: 'new at setup (step 0) — 1 line, all added',
    });
  });

  it('shows a file empty before the step as added, a removed or emptied one as removed', () => {
    expect(fileViewOf(file('modified', '', 'start\n'), 3)).toMatchObject({
      kind: 'whole',
      side: 'added',
      caption: 'was empty before step 3 — 1 line added',
    });
    expect(fileViewOf(file('deleted', 'a\n', null), 4)).toMatchObject({
      kind: 'whole',
      side: 'removed',
      text: 'a',
      caption: 'removed at step 4 — its 1 line before',
    });
    expect(fileViewOf(file('modified', 'a\nb', ''), 4)).toMatchObject({ side: 'removed' });
  });

  it('diffs a file with text on both sides; says so of an empty or binary one', () => {
    expect(fileViewOf(file('modified', 'a\n', 'b\n'), 1)).toEqual({
      kind: 'diff',
      before: 'a',
      after: 'b',
    });
    // A newline added at the end is a difference: both sides keep theirs.
    expect(fileViewOf(file('modified', 'a', 'a\n'), 1)).toEqual({ kind: 'diff', before: 'a', after: 'a\n' });
    expect(fileViewOf(file('added', null, ''), 1)).toEqual({
      kind: 'empty',
      caption: 'greet.py is new at step 1, and empty.',
    });
    expect(fileViewOf({ ...file('added', null, null), binary: true }, 1)).toEqual({
      kind: 'binary',
      caption: 'greet.py is binary.',
    });
  });

  it('says a folder is a folder, never an empty file', () => {
    const folder = { ...file('deleted', null, null), path: 'data', folder: true };
    expect(fileViewOf(folder, 2)).toEqual({
      kind: 'empty',
      caption: 'data/ is a folder, removed at step 2: the files in it are listed on their own.',
    });
    expect(fileViewOf({ ...folder, change: 'added' as const }, 0)).toMatchObject({
      caption: 'data/ is a folder, new at setup (step 0): the files in it are listed on their own.',
    });
  });
});
