import { describe, expect, it } from 'vitest';
import { createSandboxStore, selectWarmNote } from '../../renderer/src/stores/sandbox/sandbox-store';
import { createFakeBackend } from '../support/renderer-fake-client';

// The Running list said "No sandbox is running" while `docker ps` showed the warm pool's idle
// containers (a new user counted seven): it says how many wait, and only when some do.
describe('the warm pool in the Running list', () => {
  it('words the idle sandboxes, ready or starting, and says nothing of none', () => {
    expect(selectWarmNote({ warm: null })).toBeNull();
    expect(selectWarmNote({ warm: { ready: 0, starting: 0 } })).toBeNull();
    expect(selectWarmNote({ warm: { ready: 1, starting: 0 } })).toBe(
      '1 warm sandbox waits idle for the next start (no episode in it; stopped when stepbox closes)',
    );
    expect(selectWarmNote({ warm: { ready: 5, starting: 2 } })).toMatch(
      /^7 warm sandboxes wait idle .*in them;/,
    );
  });

  it('takes the count from sandbox.info and asks again when told to', async () => {
    const fake = createFakeBackend();
    let ready = 2;
    fake.on('sandbox.info', () => ({
      docker: { ok: true, message: 'ok', fix: null },
      sandbox: null,
      warm: { ready, starting: 0 },
    }));
    const store = createSandboxStore(fake.client);
    await store.getState().checkDocker();
    expect(store.getState().warm).toEqual({ ready: 2, starting: 0 });
    ready = 0;
    await store.getState().countWarm();
    expect(selectWarmNote(store.getState())).toBeNull();
    store.getState().dispose();
  });
});
