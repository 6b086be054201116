// Issue 33.8 in the window's stores: live sandboxes' idle clocks follow `episode.activity`, and a
// release becomes one notice about that episode whose button reopens it at its step.
import { describe, expect, it } from 'vitest';
import { createAppStores, releasedNotice } from '../../renderer/src/stores/app-stores';
import { createRunningStore, selectLastActive } from '../../renderer/src/stores/running/running-store';
import { createFakeBackend } from '../support/renderer-fake-client';

describe('the running slice', () => {
  it('keeps the newest activity per branch, whichever of the library and the events said it', async () => {
    const fake = createFakeBackend();
    fake.on('settings.get', () => ({
      idle_release_ms: 900_000,
      release_after_close_ms: 30_000,
      file: '/h/settings.json',
      home: '/h',
      bundled: '/app/resources',
    }));
    const running = createRunningStore(fake.client);
    await running.getState().loadSettings();
    expect(running.getState()).toMatchObject({
      idleReleaseMs: 900_000,
      settingsFile: '/h/settings.json',
      storeHome: '/h',
      bundledDir: '/app/resources',
    });
    const b = { branch: 'b1', created: 1_000, last_active: 5_000 };
    expect(selectLastActive(running.getState(), b)).toBe(5_000);
    fake.emit('episode.activity', { episode: 'e', branch: 'b1', last_active: 9_000 });
    expect(selectLastActive(running.getState(), b)).toBe(9_000);
    // An older event (they may cross a library read) never moves the clock back.
    fake.emit('episode.activity', { episode: 'e', branch: 'b1', last_active: 7_000 });
    expect(selectLastActive(running.getState(), b)).toBe(9_000);
    // A branch the library read later than the event.
    expect(selectLastActive(running.getState(), { ...b, last_active: 12_000 })).toBe(12_000);
    // Nothing known: its start.
    expect(selectLastActive(running.getState(), { branch: 'b2', created: 3_000 })).toBe(3_000);
    running.getState().dispose();
  });
});

describe('a released sandbox in the window', () => {
  it('says which episode, why and at which step, and its button reopens it there', async () => {
    const fake = createFakeBackend();
    fake.on('library.list', () => ({
      episodes: [
        {
          episode: 'ep-1',
          task: 'hello-python',
          created: 1,
          branches: [
            {
              episode: 'ep-1',
              branch: 'ep-1',
              parent_branch: null,
              fork_step: null,
              task: 'hello-python',
              agent: 'scripted:a.jsonl',
              agent_kind: 'scripted',
              status: null,
              end_reason: null,
              steps: 3,
              return: null,
              final_reward: null,
              flags: 0,
              created: 1,
              live: true,
              last_active: 2,
            },
          ],
        },
      ],
      total: 1,
    }));
    fake.on('episode.reopen', (r) => ({
      episode: 'ep-1',
      branch: 'ep-1-b2',
      state: { episode: 'ep-1', branch: 'ep-1-b2', state: 'paused', step: r.step, reason: null },
    }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.episodes.getState().refresh();
    fake.emit('episode.released', {
      episode: 'ep-1',
      branch: 'ep-1',
      step: 3,
      reason: 'idle',
      idle_ms: 905_000,
    });
    const [notice] = stores.notices.getState().items;
    expect(notice).toMatchObject({
      kind: 'idle-release',
      branch: 'ep-1',
      text: 'hello-python (ep-1) was idle 15 min, so its sandbox was released at step 3. Its trace is kept: reopen it to go on from there.',
    });
    expect(notice.action?.label).toBe('Reopen live at step 3');
    notice.action?.run();
    await new Promise((r) => setTimeout(r, 0));
    expect(fake.callsOf('episode.reopen')).toEqual([{ id: 'ep-1', step: 3 }]);
    stores.dispose();
  });

  it('says a release after the last window closed in words of its own', () => {
    expect(
      releasedNotice(null, { episode: 'e', branch: 'e-b', step: 0, reason: 'window_closed', idle_ms: 4_000 }),
    ).toBe(
      'An episode (e-b) had its sandbox released at step 0 when the last window closed. Its trace is kept: reopen it to go on from there.',
    );
  });
});
