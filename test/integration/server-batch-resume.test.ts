// batch.resume through the app services on the real engine: a batch cancelled while an
// episode runs keeps that slot unfinished; resuming runs it again on the warm pool, keeps
// the cut-off episode as superseded (still in the library) and duplicates no finished slot.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchView } from '../../shared/contract/index.js';
import type { Result } from '../../shared/result.js';
import { readBatchFile } from '../../electron/engine/batch/batch-file.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';

function value<T>(r: Result<unknown>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

describe('app services: batch.resume on the real engine', () => {
  let home: string;
  let services: AppServices;

  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-batch-resume-'));
    services = createAppServices(engineServicesPorts({ home }));
  });
  afterAll(async () => {
    await services?.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  it('resumes a batch cancelled mid-episode: the cut slot runs again, nothing lost or duplicated', async () => {
    const views: BatchView[] = [];
    let cancelling: Promise<Result<unknown>> | null = null;
    const off = services.subscribe((event, payload) => {
      if (event !== 'batch.progress') return;
      const v = payload as BatchView;
      views.push(v);
      // Cancel the moment the first slot runs (its episode may not have an id yet).
      if (!cancelling && v.slots.some((s) => s.status === 'running'))
        cancelling = services.handle('batch.cancel', { batch: v.batch });
    });
    const until = async (ok: () => boolean, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!ok()) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}: ${JSON.stringify(views.at(-1))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const { batch, dir } = value<{ batch: string; dir: string }>(
      await services.handle('batch.start', {
        tasks: [{ kind: 'sample', id: 'hello-python' }],
        episodes: 2,
        concurrency: 1,
      }),
    );
    await until(() => cancelling !== null, 'a running slot');
    value(await cancelling!);
    await until(() => views.some((v) => v.state === 'cancelled' && v.running === 0), 'the cancel');
    const stopped = value<BatchView>(await services.handle('batch.get', { batch }));
    const cut = stopped.slots.filter((s) => s.status === 'pending');
    expect(cut.length).toBeGreaterThan(0);
    const finishedBefore = stopped.slots.filter((s) => s.status === 'succeeded').map((s) => s.episode);

    const resumed = value<BatchView>(await services.handle('batch.resume', { batch }));
    expect(resumed.batch).toBe(batch);
    await until(() => views.some((v) => v.state === 'done'), 'the resumed batch to end');
    off();

    const done = value<BatchView>(await services.handle('batch.get', { batch }));
    expect(done).toMatchObject({ state: 'done', done: 2, total: 2, succeeded: 2 });
    const superseded = done.slots.flatMap((s) => s.superseded);
    // A slot cut after its episode came to exist keeps that episode as superseded; a slot's
    // id is recorded before its episode exists, and one the cancel kept from existing is dropped.
    const cutEpisodes = cut.flatMap((s) => (s.episode ? [s.episode] : []));
    expect(superseded).toEqual(
      expect.arrayContaining(cutEpisodes.filter((e) => existsSync(join(home, 'episodes', e)))),
    );
    for (const e of superseded) expect(existsSync(join(home, 'episodes', e))).toBe(true);
    const episodes = done.slots.map((s) => s.episode);
    for (const e of finishedBefore) expect(episodes).toContain(e);
    expect(new Set([...episodes, ...superseded]).size).toBe(episodes.length + superseded.length);
    expect(readBatchFile(dir).slots.flatMap((s) => s.superseded)).toEqual(superseded);
    const lib = value<{ episodes: { episode: string }[] }>(await services.handle('library.list', {}));
    for (const e of [...episodes, ...superseded]) expect(lib.episodes.map((x) => x.episode)).toContain(e);

    const again = await services.handle('batch.resume', { batch });
    expect(again.ok ? null : again.error.code).toBe('conflict');
  }, 180_000);
});
