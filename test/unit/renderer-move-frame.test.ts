import { describe, expect, it } from 'vitest';
import { createMoveFrame } from '../../renderer/src/model/move-frame';
import { createInspectorStore } from '../../renderer/src/stores/inspector/inspector-store';
import { createAppStores } from '../../renderer/src/stores/app-stores';
import { createFakeBackend } from '../support/renderer-fake-client';
import { episodeView, stepDetail } from '../support/renderer-fixtures';

/** A frame source the test paints by hand: each move's "after its paint" callback, in order. */
function frames() {
  const waiting: (() => void)[] = [];
  return {
    afterPaint: (run: () => void) => void waiting.push(run),
    paint: () => waiting.splice(0).forEach((run) => run()),
  };
}

/** Lets the promises settled so far run their callbacks. */
const flush = () => new Promise<void>((r) => setTimeout(r, 0));

describe('a step change’s frame is painted before the detail the server answers (issue 33.9)', () => {
  it('waits for the latest move’s paint; nothing waits when none is pending', async () => {
    const f = frames();
    const frame = createMoveFrame(f.afterPaint);
    let shown = false;
    await frame.painted();
    frame.moved(true);
    void frame.painted().then(() => (shown = true));
    await flush();
    expect(shown).toBe(false);
    // A second move before the paint: the first move's paint is not the latest one's.
    frame.moved(true);
    f.paint();
    await flush();
    expect(shown).toBe(true);
  });

  it('an earlier move’s paint does not release the wait for a later move’s', async () => {
    const first: (() => void)[] = [];
    const later: (() => void)[] = [];
    let which = first;
    const frame = createMoveFrame((run) => void which.push(run));
    frame.moved(true);
    which = later;
    frame.moved(true);
    let shown = false;
    void frame.painted().then(() => (shown = true));
    first.forEach((run) => run());
    await flush();
    expect(shown).toBe(false);
    later.forEach((run) => run());
    await flush();
    expect(shown).toBe(true);
  });

  it('the inspector shows a fetched detail once the move’s frame is painted, and not one another move replaced', async () => {
    const f = frames();
    const frame = createMoveFrame(f.afterPaint);
    const fake = createFakeBackend();
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    const store = createInspectorStore(fake.client, { settle: frame.painted });
    frame.moved(true);
    const showing = store.getState().show('b1', 5, true);
    await flush();
    // The answer is in, the move's frame not painted yet: the step says it loads.
    expect(fake.callsOf('episode.stepDetail')).toEqual([{ id: 'b1', step: 5 }]);
    expect(store.getState()).toMatchObject({ step: 5, load: 'loading', detail: null });
    f.paint();
    await showing;
    expect(store.getState()).toMatchObject({ step: 5, load: 'ready', detail: { step: 5 } });

    // A move whose answer comes before its frame, then another move: the first is never drawn.
    const details: (number | null)[] = [];
    const off = store.subscribe((s) => details.push(s.detail?.step ?? null));
    frame.moved(true);
    const far = store.getState().show('b1', 4000, true);
    await flush();
    frame.moved(true);
    const next = store.getState().show('b1', 4001, true);
    await flush();
    f.paint();
    await Promise.all([far, next]);
    off();
    expect(store.getState()).toMatchObject({ step: 4001, load: 'ready', detail: { step: 4001 } });
    expect(details).not.toContain(4000);
  });

  it('a move whose detail is on its way (a click beside the row) holds nothing', async () => {
    const f = frames();
    const frame = createMoveFrame(f.afterPaint);
    frame.moved(false);
    let shown = false;
    void frame.painted().then(() => (shown = true));
    await flush();
    expect(shown).toBe(true);
  });

  it('in the window, a far slider move’s detail waits for its frame; a click beside the row it moved to shows at once', async () => {
    const f = frames();
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(100, { state: null }));
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('episode.stepDetails', (req) => ({ details: req.steps.map((s) => stepDetail(s)) }));
    const stores = createAppStores(fake.client, {
      schedule: (run) => run(),
      afterPaint: () => undefined,
      painted: f.afterPaint,
    });
    stores.start('b1');
    for (let i = 0; i < 20 && stores.stepper.getState().load !== 'ready'; i++) await flush();
    f.paint();
    await flush();
    stores.stepper.getState().select(40);
    for (let i = 0; i < 5; i++) await flush();
    expect(stores.inspector.getState()).toMatchObject({ step: 40, load: 'loading' });
    f.paint();
    for (let i = 0; i < 5; i++) await flush();
    expect(stores.inspector.getState()).toMatchObject({ step: 40, load: 'ready', detail: { step: 40 } });
    // Beside it (its neighbours were fetched with it): shown in the click's own update, no frame awaited.
    stores.stepper.getState().select(41);
    expect(stores.inspector.getState()).toMatchObject({ step: 41, load: 'ready', detail: { step: 41 } });
    stores.dispose();
  });
});
