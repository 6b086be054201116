import { describe, expect, it, vi } from 'vitest';
import { createInspectorStore } from '../../renderer/src/stores/inspector/inspector-store';
import {
  detailRevision,
  detailsAround,
  detailsToHold,
} from '../../renderer/src/stores/inspector/details-ahead';
import { createFakeBackend } from '../support/renderer-fake-client';
import { stepDetail, stepRow } from '../support/renderer-fixtures';

const rows = (
  n: number,
  over: (step: number) => Parameters<typeof stepRow>[1] = () => ({ snapshot: true }),
) => Array.from({ length: n }, (_, i) => stepRow(i + 1, over(i + 1)));

/** A backend whose stepDetails answers wait until released (one release per call, in order). */
function heldDetails() {
  const fake = createFakeBackend();
  const releases: (() => void)[] = [];
  fake.on('episode.stepDetail', (req) => stepDetail(req.step));
  fake.on('episode.stepDetails', async (req) => {
    await new Promise<void>((r) => releases.push(r));
    return { details: req.steps.map((s) => stepDetail(s)) };
  });
  return { fake, releases };
}

describe('details fetched ahead (issue 33.9)', () => {
  it('wants the complete steps around the viewed one, nearest first, under their rows’ revision', () => {
    const list = rows(10);
    expect(detailsAround(list, 5, false, 2).map((w) => w.step)).toEqual([6, 4, 7, 3]);
    expect(detailsAround(list, 1, false, 2).map((w) => w.step)).toEqual([2, 3]);
    expect(detailsAround(list, 42, false, 2)).toEqual([]);
    expect(detailsAround(list, 5, false, 1)[0].revision).toBe(detailRevision(list[5]));
    // A live branch's step without its snapshot is still being recorded: not cached, not wanted.
    const live = rows(6, (s) => ({ snapshot: s < 6 }));
    expect(detailsAround(live, 4, true, 2).map((w) => w.step)).toEqual([5, 3, 2]);
  });

  it('a step viewed and not held is asked for in the call that brings its neighbours', async () => {
    const list = rows(10);
    expect(detailsToHold(list, 5, false).slice(0, 3)).toEqual([
      { step: 5, revision: detailRevision(list[4]) },
      { step: 6, revision: detailRevision(list[5]) },
      { step: 4, revision: detailRevision(list[3]) },
    ]);
    // A step still being recorded is not held (its neighbours are).
    const live = rows(6, (s) => ({ snapshot: s < 6 }));
    expect(detailsToHold(live, 6, true)[0].step).toBe(5);
    const fake = createFakeBackend();
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('episode.stepDetails', (req) => ({ details: req.steps.map((s) => stepDetail(s)) }));
    const store = createInspectorStore(fake.client);
    void store.getState().prefetch('b1', detailsToHold(list, 5, false));
    await store.getState().show('b1', 5, true, detailRevision(list[4]));
    expect(store.getState()).toMatchObject({ step: 5, load: 'ready', detail: { step: 5 } });
    expect(fake.callsOf('episode.stepDetail')).toEqual([]);
    expect(fake.callsOf('episode.stepDetails')[0]).toEqual({ id: 'b1', steps: [5, 6, 4, 7, 3, 8] });
    // Its neighbour shows in the same task.
    void store.getState().show('b1', 6, true, detailRevision(list[5]));
    expect(store.getState()).toMatchObject({ step: 6, load: 'ready', detail: { step: 6 } });
  });

  it('a step fetched ahead shows at once, with no call of its own', async () => {
    const fake = createFakeBackend();
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('episode.stepDetails', (req) => ({ details: req.steps.map((s) => stepDetail(s)) }));
    const store = createInspectorStore(fake.client);
    const list = rows(10);
    await store.getState().show('b1', 5, true, detailRevision(list[4]));
    await store.getState().prefetch('b1', detailsAround(list, 5, false, 2));
    expect(fake.callsOf('episode.stepDetails')).toEqual([{ id: 'b1', steps: [6, 4, 7, 3] }]);
    // Shown in the same task (the window paints it in the frame of the click).
    void store.getState().show('b1', 6, true, detailRevision(list[5]));
    expect(store.getState()).toMatchObject({ step: 6, load: 'ready', detail: { step: 6 } });
    expect(fake.callsOf('episode.stepDetail')).toEqual([{ id: 'b1', step: 5 }]);
    // What the window holds is not asked for again.
    await store.getState().prefetch('b1', detailsAround(list, 6, false, 1));
    expect(fake.callsOf('episode.stepDetails')).toHaveLength(1);
  });

  it('the nearest six go first, in a call of their own, and the rest of the wish behind them', async () => {
    const fake = createFakeBackend();
    fake.on('episode.stepDetails', (req) => ({ details: req.steps.map((s) => stepDetail(s)) }));
    const store = createInspectorStore(fake.client);
    await store.getState().prefetch('b1', detailsAround(rows(20), 10, false, 5));
    await vi.waitFor(() => expect(fake.callsOf('episode.stepDetails')).toHaveLength(2));
    expect(fake.callsOf('episode.stepDetails')).toEqual([
      { id: 'b1', steps: [11, 9, 12, 8, 13, 7] },
      { id: 'b1', steps: [14, 6, 15, 5] },
    ]);
  });

  it('a wish the server refuses, or answers in part, is asked for once, never again and again', async () => {
    for (const answer of ['refused', 'none'] as const) {
      const fake = createFakeBackend();
      // Answered a task later, as over a socket (answered in a microtask, a wish asked for
      // again and again would starve the test's own timers).
      fake.on('episode.stepDetails', async () => {
        await new Promise((r) => setImmediate(r));
        return answer === 'refused' ? { code: 'not_found', message: 'no such step' } : { details: [] };
      });
      const store = createInspectorStore(fake.client);
      await store.getState().prefetch('b1', detailsAround(rows(40), 20, false, 7));
      // 14 steps: six, six, then the last two; each asked for once.
      await vi.waitFor(() => expect(fake.callsOf('episode.stepDetails')).toHaveLength(3));
      // The chain has ended: a call out now would be a fourth, asked as the third settled.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      const asked = fake.callsOf('episode.stepDetails') as { steps: number[] }[];
      expect(asked, answer).toHaveLength(3);
      expect(
        asked.flatMap((c) => c.steps).sort((a, b) => a - b),
        answer,
      ).toEqual([13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27]);
    }
  });

  it('a step asked for while its neighbours are on their way waits for that answer, not a call of its own', async () => {
    const { fake, releases } = heldDetails();
    const release = () => releases.forEach((r) => r());
    const store = createInspectorStore(fake.client);
    const list = rows(10);
    const ahead = store.getState().prefetch('b1', detailsAround(list, 5, false, 2));
    await new Promise((r) => setTimeout(r, 0));
    const shown = store.getState().show('b1', 7, true, detailRevision(list[6]));
    expect(store.getState().load).toBe('loading');
    release();
    await Promise.all([ahead, shown]);
    expect(store.getState()).toMatchObject({ step: 7, load: 'ready', detail: { step: 7 } });
    expect(fake.callsOf('episode.stepDetail')).toEqual([]);
  });

  it('a new wish goes out beside the call in flight; with two out only the latest waits; forgotten details are not kept', async () => {
    const { fake, releases } = heldDetails();
    const store = createInspectorStore(fake.client);
    const list = rows(40);
    const first = store.getState().prefetch('b1', detailsAround(list, 5, false, 1));
    // A far move's wish does not wait for the last one's answer (a click beside the row moved
    // to would wait for both, one after the other: issue 33.9)…
    void store.getState().prefetch('b1', detailsAround(list, 20, false, 1));
    void store.getState().prefetch('b1', detailsAround(list, 25, false, 1));
    void store.getState().prefetch('b1', detailsAround(list, 30, false, 1));
    await new Promise((r) => setTimeout(r, 0));
    expect(fake.callsOf('episode.stepDetails')).toEqual([
      { id: 'b1', steps: [6, 4] },
      { id: 'b1', steps: [21, 19] },
    ]);
    // …but with two calls out, only the latest wish waits (a held → never floods the server).
    // Forgotten (a rollback, a reload) while the first calls are out: their answers are dropped.
    store.getState().invalidate();
    releases[0]();
    releases[1]();
    await first;
    await new Promise((r) => setTimeout(r, 0));
    expect(fake.callsOf('episode.stepDetails')).toEqual([
      { id: 'b1', steps: [6, 4] },
      { id: 'b1', steps: [21, 19] },
      { id: 'b1', steps: [31, 29] },
    ]);
    releases[2]();
    await new Promise((r) => setTimeout(r, 0));
    void store.getState().show('b1', 4, true, detailRevision(list[3]));
    expect(store.getState().load).toBe('loading');
    void store.getState().show('b1', 31, true, detailRevision(list[30]));
    expect(store.getState().load).toBe('ready');
  });

  it('a click beside a step still loading shows from the call that brought both, with no call of its own', async () => {
    // A far slider move, then a click beside the row moved to: the move's call brings both
    // steps; the click's step, asked for while `show` waited for the moved-to step, is held
    // once that call is in. It was asked for again (a second round trip on a busy server).
    const { fake, releases } = heldDetails();
    const release = () => releases.forEach((r) => r());
    const store = createInspectorStore(fake.client);
    const list = rows(40);
    void store.getState().prefetch('b1', detailsToHold(list, 20, false), true);
    const moved = store.getState().show('b1', 20, true, detailRevision(list[19]));
    const clicked = store.getState().show('b1', 22, true, detailRevision(list[21]));
    expect(store.getState()).toMatchObject({ step: 22, load: 'loading' });
    release();
    await Promise.all([moved, clicked]);
    expect(store.getState()).toMatchObject({ step: 22, load: 'ready', detail: { step: 22 } });
    expect(fake.callsOf('episode.stepDetail')).toEqual([]);
    expect(fake.callsOf('episode.stepDetails')[0]).toEqual({ id: 'b1', steps: [20, 21, 19, 22, 18, 23] });
  });

  it('the step on screen, not held, goes out at once beside two calls fetching ahead, in one slot kept for it', async () => {
    const { fake, releases } = heldDetails();
    const store = createInspectorStore(fake.client);
    const list = rows(60);
    void store.getState().prefetch('b1', detailsAround(list, 5, false, 1));
    void store.getState().prefetch('b1', detailsAround(list, 15, false, 1));
    // A far move: its step and nearest neighbours, not queued behind the two out.
    void store.getState().prefetch('b1', detailsToHold(list, 30, false).slice(0, 3), true);
    // The slot is one: a second move's step waits as a wish does (`show` asks for it alone).
    void store.getState().prefetch('b1', detailsToHold(list, 45, false).slice(0, 3), true);
    // A wish not for the step on screen never takes it.
    void store.getState().prefetch('b1', detailsAround(list, 50, false, 1));
    await new Promise((r) => setTimeout(r, 0));
    expect(fake.callsOf('episode.stepDetails')).toEqual([
      { id: 'b1', steps: [6, 4] },
      { id: 'b1', steps: [16, 14] },
      { id: 'b1', steps: [30, 31, 29] },
    ]);
    releases.forEach((r) => r());
  });
});
