import { describe, expect, it } from 'vitest';
import type { BatchSlotView, BatchView } from '../../shared/contract/models';
import {
  batchEndText,
  createBatchesStore,
  selectBatchesEnded,
  selectBatchStartWhy,
  selectCanResume,
  selectFlagCounts,
  selectProgressText,
  selectShownBatch,
  selectSuccessText,
  taskSourceOf,
} from '../../renderer/src/stores/batches/batches-store';
import { countFieldWidth } from '../../renderer/src/model/count-range';
import { BATCH_CONCURRENCY, BATCH_EPISODES } from '../../renderer/src/stores/batches/batches-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { createAppStores } from '../../renderer/src/stores/app-stores';

function slot(index: number, status: BatchSlotView['status'], episode: string | null = null): BatchSlotView {
  return {
    task: '/r/tasks/hello-python/task.json',
    task_name: 'hello-python',
    index,
    episode,
    status,
    end_reason: null,
    steps: null,
    duration_ms: null,
    superseded: [],
    flags: [],
  };
}

function view(patch: Partial<BatchView> = {}): BatchView {
  return {
    batch: 'batch-1',
    dir: '/h/batches/batch-1',
    created: 1000,
    agent: 'scripted:/r/agent.jsonl',
    episodes: 2,
    concurrency: 2,
    state: 'running',
    error: null,
    done: 0,
    total: 2,
    succeeded: 0,
    running: 2,
    eta_ms: null,
    success_rate: null,
    flags: {},
    slots: [slot(0, 'running', 'ep-a'), slot(1, 'pending')],
    ...patch,
  };
}

describe('batches store', () => {
  it('starts a batch from the form, follows batch.progress, and opens a finished slot', async () => {
    const fake = createFakeBackend();
    const opened: string[] = [];
    fake.on('batch.start', () => ({ batch: 'batch-1', dir: '/h/batches/batch-1' }));
    fake.on('batch.get', () => view());
    const store = createBatchesStore(fake.client, (e) => opened.push(e));

    expect(await store.getState().start()).toBeNull();
    expect(store.getState().error).toMatch(/choose at least one task/);

    store.getState().setForm({
      tasks: ['sample:hello-python', 'case:state-leak-no-reset'],
      episodes: 3,
      concurrency: 1,
      agent: ' manual ',
    });
    expect(await store.getState().start()).toBe('batch-1');
    expect(fake.callsOf('batch.start')).toEqual([
      {
        tasks: [
          { kind: 'sample', id: 'hello-python' },
          { kind: 'case', id: 'state-leak-no-reset' },
        ],
        episodes: 3,
        concurrency: 1,
        agent: 'manual',
      },
    ]);
    expect(store.getState().selected).toBe('batch-1');
    expect(selectShownBatch(store.getState())?.state).toBe('running');

    const finished = view({
      state: 'done',
      done: 2,
      succeeded: 1,
      running: 0,
      success_rate: 0.5,
      flags: { loop: 1, state_leak: 2 },
      slots: [slot(0, 'succeeded', 'ep-a'), slot(1, 'failed', 'ep-b')],
    });
    fake.emit('batch.progress', finished);
    const shown = selectShownBatch(store.getState())!;
    expect(store.getState().batches).toHaveLength(1);
    expect(shown.state).toBe('done');
    expect(selectProgressText(shown)).toBe('done 2/2');
    expect(selectSuccessText(shown)).toBe('50%');
    expect(selectFlagCounts(shown)).toEqual([
      ['state_leak', 2],
      ['loop', 1],
    ]);

    store.getState().openSlot(shown.slots[1]);
    store.getState().openSlot(slot(2, 'pending'));
    expect(opened).toEqual(['ep-b']);
    store.getState().dispose();
  });

  it('lists batches newest first, keeps a later progress event over an older list reply, and reports failures', async () => {
    const fake = createFakeBackend();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    fake.on('batch.list', async () => {
      await gate;
      return { batches: [view({ batch: 'old', created: 1 }), view({ done: 0 })] };
    });
    const store = createBatchesStore(fake.client);
    const refreshing = store.getState().refresh();
    fake.emit('batch.progress', view({ done: 1, eta_ms: 4000, running: 1 }));
    release();
    await refreshing;
    // The list reply was older than the event: the event's view stays.
    expect(store.getState().batches.map((b) => [b.batch, b.done])).toEqual([['batch-1', 1]]);
    expect(selectProgressText(store.getState().batches[0])).toBe('1/2 · running 1 · ETA 4s');

    await store.getState().refresh();
    expect(store.getState().batches.map((b) => b.batch)).toEqual(['batch-1', 'old']);

    fake.on('batch.cancel', () => ({ code: 'not_found', message: 'batch "x" is not running here' }));
    await store.getState().cancel('x');
    expect(store.getState().error).toMatch(/not running here/);
    expect(taskSourceOf('case:state-leak-no-reset')).toEqual({ kind: 'case', id: 'state-leak-no-reset' });
    expect(taskSourceOf('')).toBeNull();
    store.getState().dispose();
  });

  it('offers Resume only for a stopped batch with unfinished slots, and resumes it', async () => {
    const fake = createFakeBackend();
    const stopped = view({
      state: 'cancelled',
      done: 1,
      running: 0,
      slots: [slot(0, 'succeeded', 'ep-a'), slot(1, 'pending')],
    });
    expect(selectCanResume(stopped)).toBe(true);
    expect(selectCanResume(view())).toBe(false);
    expect(selectCanResume(view({ state: 'done', slots: [slot(0, 'succeeded'), slot(1, 'failed')] }))).toBe(
      false,
    );
    expect(selectCanResume(view({ state: 'stopped', slots: [slot(0, 'interrupted', 'ep-x')] }))).toBe(true);

    fake.on('batch.list', () => ({
      batches: [stopped, view({ batch: 'other', created: 2, state: 'done' })],
    }));
    fake.on('batch.resume', () => ({ ...stopped, state: 'running', running: 1 }));
    const store = createBatchesStore(fake.client);
    await store.getState().refresh();
    await store.getState().resume('batch-1');
    expect(fake.callsOf('batch.resume')).toEqual([{ batch: 'batch-1' }]);
    expect(store.getState().selected).toBe('batch-1');
    expect(selectShownBatch(store.getState())?.state).toBe('running');
    expect(store.getState().error).toBeNull();

    fake.on('batch.resume', () => ({
      code: 'conflict',
      message: 'batch "batch-1" has no unfinished slot to resume',
    }));
    await store.getState().resume('batch-1');
    expect(store.getState().error).toMatch(/no unfinished slot/);
    store.getState().dispose();
  });

  it('says every reason Run batch cannot start, the bad numbers first', () => {
    const why = selectBatchStartWhy({
      starting: false,
      form: { tasks: [], agent: '', episodes: 0, concurrency: 100000 },
    });
    expect(why).toBe(
      '“episodes” takes a whole number from 1 to 1000, not 0. ' +
        '“at once” takes a whole number from 1 to 16, not 100000. ' +
        'Choose at least one task above.',
    );
    expect(
      selectBatchStartWhy({
        starting: false,
        form: { tasks: ['sample:x'], agent: '', episodes: 2, concurrency: 2 },
      }),
    ).toBeNull();
  });

  it('sizes a number field for its max and one digit more, six digits at least', () => {
    expect(countFieldWidth(BATCH_EPISODES)).toBe('calc(6ch + 28px)');
    expect(countFieldWidth(BATCH_CONCURRENCY)).toBe('calc(6ch + 28px)');
    expect(countFieldWidth({ name: 'n', min: 1, max: 10_000_000 })).toBe('calc(9ch + 28px)');
  });
});

describe('a batch that ends says so in the notification area', () => {
  const done = view({
    state: 'done',
    done: 2,
    succeeded: 2,
    running: 0,
    success_rate: 1,
    slots: [slot(0, 'succeeded', 'ep-a'), slot(1, 'succeeded', 'ep-b')],
  });

  it('names the tasks, how many succeeded and the QA flags, once, when the batch stops running', () => {
    expect(batchEndText(done)).toBe('Batch of hello-python done: 2 of 2 episodes succeeded; no QA flags.');
    expect(
      batchEndText(view({ state: 'cancelled', done: 1, succeeded: 0, running: 0, flags: { loop: 1 } })),
    ).toBe('Batch of hello-python cancelled: 0 of 2 episodes succeeded (1 of 2 finished); QA flags: loop 1.');
    expect(selectBatchesEnded([view()], [done]).map((b) => b.batch)).toEqual(['batch-1']);
    // Already ended (the list read at start), or still running: nothing new to say.
    expect(selectBatchesEnded([done], [done])).toEqual([]);
    expect(selectBatchesEnded([], [done])).toEqual([]);
    expect(selectBatchesEnded([view()], [view({ done: 1 })])).toEqual([]);

    const fake = createFakeBackend();
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    fake.emit('batch.progress', view());
    expect(stores.notices.getState().items).toEqual([]);
    fake.emit('batch.progress', done);
    expect(stores.notices.getState().items.map((n) => [n.kind, n.tone, n.text])).toEqual([
      ['batch', 'info', 'Batch of hello-python done: 2 of 2 episodes succeeded; no QA flags.'],
    ]);
    // Its way forward: the batch shown, and the section asked to bring it into view.
    stores.batches.getState().select(null);
    const before = stores.batches.getState().revealed;
    const [notice] = stores.notices.getState().items;
    expect(notice.action?.label).toBe('Show the batch');
    notice.action?.run();
    expect(stores.batches.getState()).toMatchObject({ selected: 'batch-1', revealed: before + 1 });
    stores.dispose();
  });
});
