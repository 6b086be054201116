// The app services on the real engine: a case that runs two episodes without a sandbox
// reset (state-leak-no-reset) opens its second episode live, in the sandbox the first
// left, and the app's QA (with the task's declared workspace as reference) flags the leak.
// A batch through the same services runs on the warm pool and reports its slots.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchView, EventOf } from '../../shared/contract/index.js';
import type { Result } from '../../shared/result.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';

function value<T>(r: Result<unknown>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

function exists(id: string): boolean {
  return (
    execFileSync('docker', ['ps', '-a', '-q', '--no-trunc', '--filter', `id=${id}`], {
      encoding: 'utf8',
    }).trim().length > 0
  );
}

describe('app services: multi-episode case and batch on the real engine', () => {
  let home: string;
  let services: AppServices;
  const containers: string[] = [];

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-case-leak-'));
    services = createAppServices(engineServicesPorts({ home }));
  });
  afterAll(async () => {
    await services?.dispose();
    for (const id of containers) expect(exists(id), `container ${id} left behind`).toBe(false);
    rmSync(home, { recursive: true, force: true });
  });

  it('opens state-leak-no-reset as its second episode, live, with the state_leak flag', async () => {
    const cases = value<{ cases: { id: string; episodes?: number }[] }>(
      await services.handle('cases.list', {}),
    );
    expect(cases.cases.find((c) => c.id === 'state-leak-no-reset')?.episodes).toBe(2);

    const started = value<{ episode: string; branch: string; step: number; state: string }>(
      await services.handle('episode.start', { task: { kind: 'case', id: 'state-leak-no-reset' } }),
    );
    expect(started.step).toBe(0);
    const info = value<{ sandbox: { id: string } | null }>(
      await services.handle('sandbox.info', { id: started.branch }),
    );
    containers.push(info.sandbox!.id);

    // The first episode ran to its end before; the live one is the second.
    const lib = value<{ episodes: { episode: string; branches: { status: string | null }[] }[] }>(
      await services.handle('library.list', {}),
    );
    expect(lib.episodes).toHaveLength(2);
    const first = lib.episodes.find((e) => e.episode !== started.episode)!;
    expect(first.branches[0].status).toBe('succeeded');

    // Snapshot 0 of the live episode already holds the first one's journal line and scratch file.
    const view = value<{ flags: { rule: string; step: number }[]; state: { state: string } | null }>(
      await services.handle('episode.open', { id: started.branch }),
    );
    expect(view.state?.state).not.toBe('ended');
    expect(view.flags.map((f) => f.rule)).toContain('state_leak');
    const firstView = value<{ flags: { rule: string }[] }>(
      await services.handle('episode.open', { id: first.episode }),
    );
    expect(firstView.flags.map((f) => f.rule)).not.toContain('state_leak');

    value(await services.handle('episode.run', { id: started.branch, wait: true }));
    const ended = value<{ flags: { rule: string }[]; end: { status: string } | null }>(
      await services.handle('episode.open', { id: started.branch }),
    );
    expect(ended.end?.status).toBe('succeeded');
    expect(ended.flags.map((f) => f.rule)).toContain('state_leak');
    value(await services.handle('episode.stop', { id: started.branch }));
  });

  it('runs a batch on the warm pool and reports its slots and progress', async () => {
    const progress: BatchView[] = [];
    const off = services.subscribe((event, payload) => {
      if (event === 'batch.progress') progress.push(payload as EventOf<'batch.progress'>);
    });
    const { batch, dir } = value<{ batch: string; dir: string }>(
      await services.handle('batch.start', {
        tasks: [{ kind: 'sample', id: 'hello-python' }],
        episodes: 2,
        concurrency: 2,
      }),
    );
    expect(dir).toContain(join(home, 'batches'));
    const deadline = Date.now() + 120_000;
    while (!progress.some((p) => p.batch === batch && p.state !== 'running')) {
      if (Date.now() > deadline)
        throw new Error(`batch ${batch} did not finish: ${JSON.stringify(progress.at(-1))}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    off();
    const done = value<BatchView>(await services.handle('batch.get', { batch }));
    expect(done).toMatchObject({ state: 'done', done: 2, total: 2, succeeded: 2, success_rate: 1 });
    expect(done.slots.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(progress.some((p) => p.state === 'running' && p.running > 0)).toBe(true);
    const listed = value<{ batches: BatchView[] }>(await services.handle('batch.list', {}));
    expect(listed.batches.map((b) => b.batch)).toContain(batch);
    const lib = value<{ episodes: { episode: string }[] }>(await services.handle('library.list', {}));
    for (const s of done.slots) expect(lib.episodes.map((e) => e.episode)).toContain(s.episode);
    const cancel = await services.handle('batch.cancel', { batch: 'nope' });
    expect(cancel.ok ? null : cancel.error.code).toBe('not_found');
  });
});
