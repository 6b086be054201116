import { describe, expect, it } from 'vitest';
import { actionApplies, debuggerAction, installDebuggerKeys } from '../../renderer/src/hooks/debugger-keys';
import { createAppStores } from '../../renderer/src/stores/app-stores';
import { createFakeBackend } from '../support/renderer-fake-client';
import { episodeView } from '../support/renderer-fixtures';

const key = (k: string, mods: Partial<KeyboardEvent> = {}) =>
  ({
    key: k,
    shiftKey: false,
    altKey: false,
    ctrlKey: false,
    metaKey: false,
    target: null,
    ...mods,
  }) as KeyboardEvent;

describe('debugger keys', () => {
  it('maps the debugger keys', () => {
    expect(debuggerAction(key('F10'))).toBe('step');
    expect(debuggerAction(key('F5'))).toBe('continue');
    expect(debuggerAction(key('F5', { shiftKey: true }))).toBe('stop');
    expect(debuggerAction(key('F9'))).toBe('breakpoint');
    expect(debuggerAction(key('ArrowLeft'))).toBe('previous');
    expect(debuggerAction(key('ArrowRight', { altKey: true }))).toBe('next');
    expect(debuggerAction(key('F5', { ctrlKey: true }))).toBeNull();
    expect(debuggerAction(key('a'))).toBeNull();
    expect(debuggerAction(key('Escape'))).toBe('pause');
    expect(debuggerAction(key('Escape', { shiftKey: true }))).toBeNull();
  });

  it('Escape pauses only a manual agent waiting for its decision', async () => {
    const fake = createFakeBackend();
    const view = episodeView(1);
    fake.on('episode.open', () => ({
      ...view,
      // The agent says a person decides (agent_traits), whatever its spec's text.
      summary: {
        ...view.summary,
        agent: 'manual',
        agent_traits: { decides: 'person' as const, as_case: 'script' as const },
      },
      state: { episode: 'ep1', branch: 'b-main', state: 'running' as const, step: 1, reason: null },
    }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().open('b-main');
    expect(actionApplies(stores, 'pause')).toBe(true);
    stores.stepper.setState({ state: 'paused' });
    expect(actionApplies(stores, 'pause')).toBe(false);
    stores.stepper.setState({
      state: 'running',
      view: {
        ...view,
        summary: {
          ...view.summary,
          agent: 'scripted:a',
          agent_traits: { decides: 'script', as_case: 'script' },
        },
      },
    });
    expect(actionApplies(stores, 'pause')).toBe(false);
    expect(actionApplies(stores, 'step')).toBe(true);
    stores.dispose();
  });

  it('listens on window in the capture phase, cancels the default and drives the stepper', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(3));
    fake.on('episode.step', () => ({
      episode: 'ep1',
      branch: 'b-main',
      state: 'paused',
      step: 4,
      reason: null,
    }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().open('b-main');
    const listeners: { fn: (e: KeyboardEvent) => void; capture: unknown }[] = [];
    const fakeWindow = {
      addEventListener: (_t: string, fn: (e: KeyboardEvent) => void, o: { capture: boolean }) =>
        listeners.push({ fn, capture: o.capture }),
      removeEventListener: () => {},
    };
    (globalThis as { window?: unknown }).window = fakeWindow;
    try {
      installDebuggerKeys(stores);
      expect(listeners[0].capture).toBe(true);
      let prevented = 0;
      const press = (k: string) =>
        listeners[0].fn({
          ...key(k),
          preventDefault: () => prevented++,
          stopPropagation: () => {},
          repeat: false,
        } as KeyboardEvent);
      press('ArrowLeft');
      expect(stores.stepper.getState().selectedStep).toBe(2);
      press('F9');
      await Promise.resolve();
      expect(stores.stepper.getState().breakpoints).toEqual([{ kind: 'step', step: 2 }]);
      press('F10');
      await new Promise((r) => setTimeout(r, 0));
      expect(fake.callsOf('episode.step')).toEqual([{ id: 'b-main' }]);
      expect(prevented).toBe(3);
    } finally {
      delete (globalThis as { window?: unknown }).window;
      stores.dispose();
    }
  });
});

describe('debugger keys on a recorded episode', () => {
  it('F10, F5 and Shift+F5 answer in plain words and send nothing', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => ({ ...episodeView(3), state: null }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    const { runDebuggerAction } = await import('../../renderer/src/hooks/debugger-keys');
    try {
      // Guidance, not a failure: a hint (notices-error-1024x700 showed it in red, as an error).
      runDebuggerAction(stores, 'step');
      expect(stores.stepper.getState().hint).toMatch(/No episode is open/);
      expect(stores.stepper.getState().error).toBeNull();
      await stores.stepper.getState().open('b-main');
      expect(stores.stepper.getState().live).toBe(false);
      runDebuggerAction(stores, 'step');
      // A trace that never ran in this window, in the words every panel names its way on with.
      const said =
        'This is a recorded trace. To go on, press “Reopen live at step 3” or “Fork at step 3” under Replay.';
      expect(stores.stepper.getState().hint).toBe(said);
      expect(stores.stepper.getState().error).toBeNull();
      // The store's own Step on a recorded branch says the same, as a hint too.
      stores.stepper.getState().explain(null);
      await stores.stepper.getState().step();
      expect(stores.stepper.getState().hint).toBe(said);
      expect(stores.stepper.getState().error).toBeNull();
      runDebuggerAction(stores, 'continue');
      runDebuggerAction(stores, 'stop');
      expect(stores.stepper.getState().hint).toMatch(/not running/);
      expect(stores.stepper.getState().error).toBeNull();
      expect(fake.callsOf('episode.step')).toEqual([]);
      expect(fake.callsOf('episode.run')).toEqual([]);
      expect(fake.callsOf('episode.stop')).toEqual([]);
    } finally {
      stores.dispose();
    }
  });
});
