import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DiskEpisodeStore, openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import { writeSampleEpisode, writeSampleFork, type SampleEpisode } from '../support/traces.js';

const EPISODES = 300;

describe('library.list from the SQLite index', () => {
  let home: string;
  let services: AppServices | null = null;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-library-'));
  });
  afterEach(async () => {
    await services?.dispose();
    services = null;
    vi.restoreAllMocks();
    vi.useRealTimers();
    rmSync(home, { recursive: true, force: true });
  });

  /** A fresh services instance, as a new app process would build it. */
  function open(): AppServices {
    services = createAppServices(engineServicesPorts({ home }));
    return services;
  }

  async function list(s: AppServices, query?: string) {
    const r = await s.handle('library.list', { query, limit: 1000 });
    if (!r.ok) throw new Error(r.error.message);
    return r.value as { episodes: { episode: string; branches: Record<string, unknown>[] }[]; total: number };
  }

  it(`lists ${EPISODES} episodes reading no trace once their flags are known, and only a changed one after`, async () => {
    const store = openEpisodeStore(home);
    const written: SampleEpisode[] = [];
    for (let i = 0; i < EPISODES; i++)
      written.push(await writeSampleEpisode(store, { steps: 2, task: `task-${i % 7}`, created: 1_000 + i }));
    const fork = await writeSampleFork(store, written[0], { at: 1, steps: 1 });
    const reads = vi.spyOn(DiskEpisodeStore.prototype, 'readTrace');
    // Listed a while after they were written, as a store usually is: a version seen within
    // moments of its file's change is read again once settled (file-version.ts).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });

    // First listing ever: flags are computed once per branch (QA needs the trace) and kept in the index.
    const first = await list(open());
    expect(first.total).toBe(EPISODES);
    expect(reads.mock.calls.length).toBeLessThanOrEqual(3 * (EPISODES + 1));
    await services?.dispose();

    // A new process: everything comes from the index.
    reads.mockClear();
    const s = open();
    const again = await list(s);
    expect(reads).not.toHaveBeenCalled();
    expect(again).toEqual(first);
    const main = again.episodes.find((e) => e.episode === written[0].episode);
    expect(main?.branches.map((b) => [b.branch, b.parent_branch, b.fork_step])).toEqual([
      [written[0].branch, null, null],
      [fork.branch, written[0].branch, 1],
    ]);
    const newest = again.episodes[0].branches[0];
    expect(newest).toMatchObject({
      status: 'succeeded',
      steps: 2,
      // Worked out from the rewards (0.1 a step, 1 at the end; the sample's γ), not the end's 1.
      return: 1.189,
      final_reward: 1,
      task: 'task-5',
      live: false,
    });

    // One more episode: only its trace is read.
    const added = await writeSampleEpisode(store, { steps: 4, created: 10_000, end: null });
    reads.mockClear();
    const third = await list(s);
    const readPaths = new Set(reads.mock.calls.map(([b]) => b.branch));
    expect([...readPaths]).toEqual([added.branch]);
    expect(third.total).toBe(EPISODES + 1);
    expect(third.episodes[0].branches[0]).toMatchObject({ branch: added.branch, status: null, steps: 4 });

    // A search narrows what the index listed, without reading traces.
    reads.mockClear();
    const found = await list(s, 'task-3');
    expect(reads).not.toHaveBeenCalled();
    expect(found.total).toBe(written.filter((_, i) => i % 7 === 3).length);
  }, 120_000);
});
