import { describe, expect, it } from 'vitest';
import { createProjectsStore } from '../../renderer/src/stores/projects/projects-store';
import { loadProjectDrafts } from '../../renderer/src/stores/projects/project-drafts-memory';
import { createFakeBackend } from '../support/renderer-fake-client';

/** A localStorage of the test's own. */
function memoryStorage(): Pick<Storage, 'getItem' | 'setItem'> & { readonly items: Map<string, string> } {
  const items = new Map<string, string>();
  return { items, getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v) };
}

describe("a bare folder's Goal and Check across a reload", () => {
  it('are kept by the window (a reload showed the folder typed for as "needs a goal"), and forgotten with Remove', async () => {
    const fake = createFakeBackend();
    const project = { path: '/home/me/calc', name: 'calc', kind: 'folder' as const, opened_at: 1 };
    fake.on('projects.list', () => ({ projects: [project], native_picker: false }));
    fake.on('projects.remove', () => ({ removed: true }));
    const storage = memoryStorage();
    const before = createProjectsStore(fake.client, storage);
    before.getState().setGoal(project.path, 'Make python3 test_calc.py pass');
    before.getState().setCheck(project.path, 'python3 test_calc.py');
    before.getState().setGoal('/home/me/other', 'x');
    before.getState().setGoal('/home/me/other', '');
    // The reload: a new store over the same storage.
    const after = createProjectsStore(fake.client, storage);
    expect(after.getState().goals).toEqual({ [project.path]: 'Make python3 test_calc.py pass' });
    expect(after.getState().checks).toEqual({ [project.path]: 'python3 test_calc.py' });
    expect(await after.getState().remove(project.path)).toBe(true);
    expect(after.getState().goals).toEqual({});
    expect(createProjectsStore(fake.client, storage).getState().checks).toEqual({});
  });

  it('what the storage holds is parsed: what does not fit is left out, the rest kept', () => {
    const storage = memoryStorage();
    const put = (v: unknown) => storage.items.set('stepbox.project-drafts.v1', JSON.stringify(v));
    put({
      '/ok': { goal: 'g', check: 'c' },
      relative: { goal: 'g' },
      '/not-text': { goal: 3, check: ['c'] },
      '/too-long': { goal: 'x'.repeat(20_001), check: 'c' },
      '/array': ['g'],
    });
    expect(loadProjectDrafts(storage)).toEqual({
      goals: { '/ok': 'g' },
      checks: { '/ok': 'c', '/too-long': 'c' },
    });
    storage.items.set('stepbox.project-drafts.v1', '{not json');
    expect(loadProjectDrafts(storage)).toEqual({ goals: {}, checks: {} });
    put(['a']);
    expect(loadProjectDrafts(storage)).toEqual({ goals: {}, checks: {} });
    expect(loadProjectDrafts(null)).toEqual({ goals: {}, checks: {} });
  });
});
