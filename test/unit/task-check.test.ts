import { describe, expect, it } from 'vitest';
import { taskCheckOf } from '../../shared/task-check.js';

describe("a recorded task's check, for step 0 in the window", () => {
  it('says the command and the files only the verifier sees, by name', () => {
    expect(
      taskCheckOf({ verifier: { command: 'bash /tests/test.sh', files: { 'test.sh': {}, 'a.py': {} } } }),
    ).toEqual({ command: 'bash /tests/test.sh', files: ['a.py', 'test.sh'], files_dir: '/tests' });
    expect(taskCheckOf({ verifier: { command: 'test -f out.txt', files_dir: '/v' } })).toEqual({
      command: 'test -f out.txt',
      files: [],
      files_dir: '/v',
    });
  });
  it('is null for a task without a verifier', () => {
    expect(taskCheckOf({ name: 't' })).toBeNull();
    expect(taskCheckOf({ verifier: null })).toBeNull();
  });
  it('says nothing (not "none") of a header whose verifier it cannot read', () => {
    for (const verifier of [
      5,
      'x',
      { command: 7 },
      { command: 'x', files: ['a'] },
      { command: 'x', files_dir: 3 },
    ])
      expect(taskCheckOf({ verifier }), JSON.stringify(verifier)).toBeUndefined();
  });
});
