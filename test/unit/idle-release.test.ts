// Issue 33.8: live sandboxes do not pile up. Idle ones are released after ui.idle_release (their
// traces kept, reopenable at their step), all of them once the last window has been gone for
// ui.release_after_close; a reload inside that grace keeps them. Time is a fake clock: no sleeps.
import { describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { IdleReleaser, sweepEvery, type LiveActivity } from '../../electron/services/idle-release.js';
import type { EpisodeController } from '../../electron/engine/harness/episode-controller.js';
import type { StopReason } from '../../electron/engine/harness/episode-controller.js';
import {
  createClient,
  createMemoryTransport,
  type EventName,
  type EventOf,
} from '../../shared/contract/index.js';
import { DEFAULT_SETTINGS, type Settings } from '../../shared/settings.js';
import { fakePorts, type FakeController } from '../support/contract-fakes.js';
import { value } from '../support/contract.js';
import { FakeClock, settle } from '../support/fake-clock.js';

const MIN = 60_000;

/** Services over fake ports and a fake clock, with every event they emit recorded. */
function rig(ui: Partial<Settings['ui']> = {}) {
  const clock = new FakeClock();
  const { ports } = fakePorts();
  const controllers: FakeController[] = [];
  const start = ports.harness.start.bind(ports.harness);
  ports.harness.start = async (request) => {
    const c = await start(request);
    controllers.push(c as FakeController);
    return c;
  };
  const reopen = ports.harness.reopen.bind(ports.harness);
  ports.harness.reopen = async (...args) => {
    const c = await reopen(...args);
    controllers.push(c as FakeController);
    return c;
  };
  // The library lists the controllers made here (the fake store lists none by itself).
  ports.traces.listBranches = async () =>
    controllers.map((c) => ({
      episode: c.episode,
      branch: c.branch,
      parent_branch: c.parent,
      fork_step: null,
      task: 'hello',
      agent: 'scripted:a.jsonl',
      agent_kind: 'scripted',
      status: null,
      end_reason: null,
      steps: c.currentStep(),
      return: null,
      final_reward: null,
      flags: 0,
      created: 0,
      live: false,
    }));
  const services = createAppServices(ports, {
    clock,
    settings: { settings: { ui: { ...DEFAULT_SETTINGS.ui, ...ui } }, file: null },
  });
  const client = createClient(createMemoryTransport(services));
  const events: { event: EventName; payload: unknown }[] = [];
  services.subscribe((event, payload) => events.push({ event, payload }));
  const of = <E extends EventName>(name: E) =>
    events.filter((e) => e.event === name).map((e) => e.payload as EventOf<E>);
  const live = async () =>
    value(await client.library.list({}))
      .episodes.flatMap((e) => e.branches)
      .filter((b) => b.live);
  /** The branches released so far: by the releaser's own timer, or a sweep the test asks for. */
  const released = async () => {
    await services.sweepIdle();
    return of('episode.released').map((e) => e.branch);
  };
  return { clock, services, client, controllers, of, live, released };
}

describe('IdleReleaser', () => {
  function fakeLive(rows: LiveActivity[]) {
    const released: { branch: string; idleMs: number }[] = [];
    return {
      released,
      activity: () => rows,
      releaseIdle: async (branch: string, idleMs: number) => {
        released.push({ branch, idleMs });
        return true;
      },
    };
  }

  it('releases exactly the branches idle past the limit and not busy', async () => {
    const clock = new FakeClock(100 * MIN);
    const live = fakeLive([
      { branch: 'old', lastActive: 84 * MIN, busy: false },
      { branch: 'just-under', lastActive: 85 * MIN + 1, busy: false },
      { branch: 'running', lastActive: 10 * MIN, busy: true },
      { branch: 'exactly', lastActive: 85 * MIN, busy: false },
    ]);
    const releaser = new IdleReleaser(live, 15 * MIN, clock);
    expect((await releaser.sweep()).sort()).toEqual(['exactly', 'old']);
    expect(live.released.find((r) => r.branch === 'old')?.idleMs).toBe(16 * MIN);
  });

  it('looks by itself on its clock, and not at all when the setting is off', async () => {
    const clock = new FakeClock(0);
    const live = fakeLive([{ branch: 'a', lastActive: 0, busy: false }]);
    const releaser = new IdleReleaser(live, 15 * MIN, clock);
    releaser.start();
    await clock.advance(15 * MIN - sweepEvery(15 * MIN));
    expect(live.released).toEqual([]);
    await clock.advance(sweepEvery(15 * MIN));
    expect(live.released.map((r) => r.branch)).toEqual(['a']);
    await releaser.stop();
    expect(clock.pending()).toBe(0);

    const offLive = fakeLive([{ branch: 'b', lastActive: 0, busy: false }]);
    const off = new IdleReleaser(offLive, null, clock);
    off.start();
    expect(clock.pending()).toBe(0);
    await clock.advance(24 * 60 * MIN);
    expect(await off.sweep()).toEqual([]);
    expect(offLive.released).toEqual([]);
  });

  it('looks often enough for a short limit and rarely for a long one', () => {
    expect(sweepEvery(5_000)).toBe(1_000);
    expect(sweepEvery(15 * MIN)).toBe(30_000);
    expect(sweepEvery(2 * MIN)).toBe(12_000);
  });
});

describe('idle live episodes in the services', () => {
  it('releases a paused episode after ui.idle_release, keeps its trace, and reopens it at its step', async () => {
    const r = rig();
    const { branch } = value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    value(await r.client.episode.step({ id: branch }));
    const [summary] = await r.live();
    expect(summary.branch).toBe(branch);
    expect(summary.last_active).toBe(r.clock.now());

    await r.clock.advance(15 * MIN - 1);
    expect(await r.released()).toEqual([]);
    expect((await r.live()).map((b) => b.branch)).toEqual([branch]);

    await r.clock.advance(1);
    expect(await r.released()).toEqual([branch]);
    // Its sandbox is gone, the trace closed as released (not lost), and the window is told where.
    expect(r.controllers[0].disposed).toBe(true);
    expect(await r.live()).toEqual([]);
    expect(r.of('episode.released')).toEqual([
      { episode: summary.episode, branch, step: 1, reason: 'idle', idle_ms: 15 * MIN },
    ]);
    const view = value(await r.client.episode.open({ id: branch }));
    expect(view.end).toMatchObject({ status: 'interrupted', end_reason: 'idle_released' });
    expect(view.state).toBeNull();

    // "Reopen" at the step it was released at: live again, from there.
    const reopened = value(await r.client.episode.reopen({ id: branch, step: 1 }));
    expect(reopened.state.step).toBe(1);
    expect((await r.live()).map((b) => b.branch)).toEqual([reopened.branch]);
    await r.services.dispose();
  });

  it('counts a step, an injection and terminal input as activity, each starting the idle time again', async () => {
    const r = rig({ idle_release: 10 * MIN });
    const { branch } = value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    const activity = () => r.of('episode.activity').filter((a) => a.branch === branch);

    await r.clock.advance(9 * MIN);
    value(await r.client.episode.step({ id: branch }));
    expect(activity().at(-1)?.last_active).toBe(r.clock.now());
    await r.clock.advance(9 * MIN);
    expect(await r.released()).toEqual([]);

    value(await r.client.episode.inject({ id: branch, role: 'user', content: 'still here' }));
    await r.clock.advance(9 * MIN);
    expect(await r.released()).toEqual([]);

    const { terminal } = value(await r.client.terminal.open({ id: branch, cols: 80, rows: 24 }));
    await r.clock.advance(9 * MIN);
    value(await r.client.terminal.input({ terminal, data: 'l' }));
    const typedAt = r.clock.now();
    await r.clock.advance(9 * MIN);
    expect(await r.released()).toEqual([]);
    expect(activity().at(-1)?.last_active).toBe(typedAt);
    // An open terminal nobody types into is not activity: 10 min after the last key it goes.
    await r.clock.advance(1 * MIN);
    expect(await r.released()).toEqual([branch]);
    await r.services.dispose();
  });

  it('never releases a branch running a step, however long it runs; idle counts from its end', async () => {
    const r = rig({ idle_release: 5 * MIN });
    const { branch } = value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    const c = r.controllers[0] as FakeController & { step: EpisodeController['step'] };
    const real = c.step.bind(c);
    let finish: () => void = () => undefined;
    c.step = () =>
      new Promise<StopReason>((resolve) => {
        finish = () => void real().then(resolve);
      });
    const stepping = r.client.episode.step({ id: branch });
    await settle();
    await r.clock.advance(60 * MIN);
    expect(await r.released()).toEqual([]);
    finish();
    value(await stepping);
    await r.clock.advance(5 * MIN - 1);
    expect(await r.released()).toEqual([]);
    await r.clock.advance(1);
    expect(await r.released()).toEqual([branch]);
    await r.services.dispose();
  });

  it('with ui.idle_release off, keeps an idle episode', async () => {
    const r = rig({ idle_release: null });
    const { branch } = value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    await r.clock.advance(48 * 60 * MIN);
    expect(await r.released()).toEqual([]);
    expect((await r.live()).map((b) => b.branch)).toEqual([branch]);
    expect(value(await r.client.settings.get({}))).toEqual({
      idle_release_ms: null,
      release_after_close_ms: 30_000,
      file: null,
      home: null,
      bundled: null,
    });
    await r.services.dispose();
  });
});

describe('the last window closing', () => {
  it('releases every live episode after the grace; a reload within it keeps them', async () => {
    const r = rig({ release_after_close: 30_000, idle_release: null });
    const a = value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } })).branch;
    const b = value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } })).branch;
    r.services.openClient('ws-1');
    // A reload: the old connection closes, the new one opens within the grace.
    await r.services.closeClient('ws-1');
    await r.clock.advance(2_000);
    r.services.openClient('ws-2');
    await r.clock.advance(60_000);
    expect((await r.live()).map((x) => x.branch).sort()).toEqual([a, b].sort());

    // Two windows: closing one keeps them; closing the last releases them once the grace passed.
    r.services.openClient('ws-3');
    await r.services.closeClient('ws-2');
    await r.clock.advance(60_000);
    expect(await r.live()).toHaveLength(2);
    await r.services.closeClient('ws-3');
    await r.clock.advance(29_999);
    expect(await r.live()).toHaveLength(2);
    await r.clock.advance(1);
    await settle();
    expect(await r.live()).toEqual([]);
    expect(
      r
        .of('episode.released')
        .map((e) => [e.branch, e.reason])
        .sort(),
    ).toEqual(
      [
        [a, 'window_closed'],
        [b, 'window_closed'],
      ].sort(),
    );
    expect(value(await r.client.episode.open({ id: a })).end?.end_reason).toBe('window_closed');
    await r.services.dispose();
  });

  it('keeps what a server driven only through /api started (no window ever opened)', async () => {
    const r = rig({ release_after_close: 1_000, idle_release: null });
    value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    await r.services.closeClient('http');
    await r.clock.advance(60_000);
    expect(await r.live()).toHaveLength(1);
    await r.services.dispose();
  });

  it('with ui.release_after_close off, keeps them until the app quits', async () => {
    const r = rig({ release_after_close: null, idle_release: null });
    value(await r.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    r.services.openClient('window-1');
    await r.services.closeClient('window-1');
    await r.clock.advance(24 * 60 * MIN);
    expect(await r.live()).toHaveLength(1);
    await r.services.dispose();
  });
});
