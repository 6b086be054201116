import { describe, expect, it } from 'vitest';
import { createProjectsStore } from '../../renderer/src/stores/projects/projects-store';
import { createFakeBackend } from '../support/renderer-fake-client';

/** A store whose folder `/w/` holds `names` (all folders). */
function storeOver(names: readonly string[]) {
  const fake = createFakeBackend();
  fake.on('projects.browse', () => ({
    folder: '/w',
    entries: names.map((name) => ({ name, type: 'dir' as const })),
  }));
  return createProjectsStore(fake.client, null);
}

describe("Open…'s Tab: what the completions share, as a shell fills it in", () => {
  it('fills in their longest common start, the whole one when alone, nothing when it adds nothing', async () => {
    const store = storeOver(['proj-bb', 'proj-dc', 'proj-py', 'notes']);
    await store.getState().setPath('/w/pr');
    expect(store.getState().completion).toBe('/w/proj-');
    // Nothing more shared: Tab moves on.
    await store.getState().setPath('/w/proj-');
    expect(store.getState().completion).toBeNull();
    // One match: whole, a folder with its slash (it goes on to its entries).
    await store.getState().setPath('/w/proj-p');
    expect(store.getState().completion).toBe('/w/proj-py/');
    await store.getState().setPath('/w/x');
    expect(store.getState().completion).toBeNull();
  });
  it('counts every match, not only the 50 listed: the 51st can shorten what they share', async () => {
    const names = [...Array.from({ length: 50 }, (_, i) => `run-a${String(i).padStart(2, '0')}`), 'run-b'];
    const store = storeOver(names);
    await store.getState().setPath('/w/r');
    expect(store.getState().suggestions).toHaveLength(50);
    expect(store.getState().completion).toBe('/w/run-');
  });
});
