import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchView } from '../../shared/contract/models.js';
import {
  emptySlot,
  readBatchFile,
  writeBatchFile,
  type BatchFile,
} from '../../electron/engine/batch/batch-file.js';
import { supersedePartial } from '../../electron/engine/batch/batch-runner.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import type { BatchPort } from '../../electron/services/ports.js';
import { fakePorts } from '../support/contract-fakes.js';

/**
 * A batch port over real batch folders whose runner fills slots without Docker: the first
 * run finishes slot 0 and leaves slot 1's episode running until cancelled; later runs
 * reconcile like the real runner (`supersedePartial`) and finish what is left.
 */
function folderBatchPort(home: string) {
  let runs = 0;
  let episodes = 0;
  const port: BatchPort = {
    create({ tasks, agent, episodes: n, concurrency }) {
      const id = `batch-${tasks.length}-${n}`;
      const dir = join(home, 'batches', id);
      const batch: BatchFile = {
        format: 'stepbox.batch/1',
        id,
        home,
        created: 1,
        agent,
        episodes: n,
        concurrency,
        tasks: tasks.map((path) => ({ path, name: 'hello' })),
        slots: Array.from({ length: n }, (_, index) => emptySlot(tasks[0], 'hello', index)),
      };
      writeBatchFile(dir, batch);
      return { dir, batch };
    },
    async run(dir, batch, onProgress, signal) {
      runs += 1;
      supersedePartial(batch);
      for (const [i, slot] of batch.slots.entries()) {
        if (slot.status !== null) continue;
        slot.episode = `ep-${++episodes}`;
        writeBatchFile(dir, batch);
        onProgress();
        if (runs === 1 && i === 1) {
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          return batch;
        }
        Object.assign(slot, { status: 'succeeded', end_reason: 'final_answer', steps: 1, duration_ms: 5 });
        writeBatchFile(dir, batch);
        onProgress();
      }
      return batch;
    },
    list() {
      const root = join(home, 'batches');
      return readdirSync(root).map((name) => ({
        dir: join(root, name),
        batch: readBatchFile(join(root, name)),
      }));
    },
  };
  return port;
}

describe('batch.resume through the services', () => {
  let home: string;
  let services: AppServices;
  afterEach(async () => {
    await services.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  it('re-runs a cancelled batch’s unfinished slot, keeping the cut-off episode as superseded', async () => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-batch-resume-'));
    services = createAppServices({ ...fakePorts().ports, batches: folderBatchPort(home) });
    const views: BatchView[] = [];
    services.subscribe((event, payload) => {
      if (event === 'batch.progress') views.push(payload as BatchView);
    });
    const until = async (ok: (v: BatchView) => boolean, what: string) => {
      const deadline = Date.now() + 5_000;
      while (!views.some(ok)) {
        if (Date.now() > deadline)
          throw new Error(`no batch.progress ${what}: ${JSON.stringify(views.at(-1))}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const call = async (op: string, input: unknown) => services.handle(op, input);

    const started = await call('batch.start', {
      tasks: [{ kind: 'sample', id: 'hello' }],
      agent: 'manual',
      episodes: 2,
      concurrency: 1,
    });
    if (!started.ok) throw new Error(started.error.message);
    const { batch } = started.value as { batch: string };
    await until((v) => v.slots[1]?.episode === 'ep-2', 'with slot 1 running');

    const busy = await call('batch.resume', { batch });
    expect(busy.ok ? null : busy.error.code).toBe('conflict');

    const cancelled = await call('batch.cancel', { batch });
    expect(cancelled.ok && (cancelled.value as BatchView).state).toBe('cancelled');

    const resumed = await call('batch.resume', { batch });
    if (!resumed.ok) throw new Error(resumed.error.message);
    expect(['running', 'done']).toContain((resumed.value as BatchView).state);
    await until((v) => v.state === 'done', 'done');

    const done = await call('batch.get', { batch });
    if (!done.ok) throw new Error(done.error.message);
    const view = done.value as BatchView;
    expect(view).toMatchObject({ state: 'done', done: 2, total: 2, succeeded: 2 });
    expect(view.slots.map((s) => [s.episode, s.status, s.superseded])).toEqual([
      ['ep-1', 'succeeded', []],
      ['ep-3', 'succeeded', ['ep-2']],
    ]);
    expect(readBatchFile(view.dir).slots[1].superseded).toEqual(['ep-2']);

    const again = await call('batch.resume', { batch });
    expect(again.ok ? null : again.error.code).toBe('conflict');
    const missing = await call('batch.resume', { batch: 'nope' });
    expect(missing.ok ? null : missing.error.code).toBe('not_found');
  });
});
