import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkBranch } from '../../electron/engine/qa/check-branches.js';
import { loadBranches } from '../../electron/engine/qa/episode-set.js';
import { openEngine, type Engine } from '../../electron/engine/open-engine.js';
import { tempHome } from '../support/harness.js';
import { writeSampleEpisode } from '../support/traces.js';

// A batch remembers the $STEPBOX_HOME it ran in; `check`/`report`/`export` of its folder
// from another home read it there, through the engine's one store-opening path.
let recorded: ReturnType<typeof tempHome>;
let caller: ReturnType<typeof tempHome>;
let episode: string;
let batchDir: string;

beforeAll(async () => {
  recorded = tempHome();
  caller = tempHome();
  ({ episode } = await writeSampleEpisode(recorded.store, { task: 'other-home' }));
  batchDir = join(caller.dir, 'batch-from-elsewhere');
  mkdirSync(batchDir);
  writeFileSync(
    join(batchDir, 'batch.json'),
    JSON.stringify({ home: recorded.home, slots: [{ task: '/tasks/other-home.json', index: 0, episode }] }),
  );
});
afterAll(() => {
  recorded?.cleanup();
  caller?.cleanup();
});

describe('loadBranches of a batch recorded under another home', () => {
  it('reads the batch in its own store, which the engine opens (once) — not a store of its own', async () => {
    const engine: Engine = caller.engine;
    const storeAt = vi.spyOn(engine, 'storeAt');
    const [branch, ...rest] = loadBranches(batchDir, engine);
    expect(rest).toHaveLength(0);
    expect(branch.episode).toBe(episode);
    expect(branch.slot).toEqual({ task: '/tasks/other-home.json', index: 0 });
    expect(storeAt).toHaveBeenCalledWith(recorded.home);
    expect(branch.store).toBe(storeAt.mock.results[0].value);
    expect(branch.store?.home).toBe(recorded.home);
    // Loading again reuses the engine's store for that home.
    expect(loadBranches(batchDir, engine)[0].store).toBe(branch.store);
    // QA reads the snapshots where they are: the recorded home, not the caller's.
    const check = await checkBranch(branch, engine.store);
    expect(check.episode).toBe(episode);
    storeAt.mockRestore();
  });

  it("storeAt gives the engine's own store for its own home, and another home's store left unswept", () => {
    const engine = openEngine({ home: caller.home, sweep: false });
    expect(engine.storeAt(caller.home)).toBe(engine.store);
    expect(engine.storeAt(join(caller.home, '.'))).toBe(engine.store);
    const other = engine.storeAt(recorded.home);
    expect(other).not.toBe(engine.store);
    expect(other.home).toBe(recorded.home);
    expect(engine.storeAt(recorded.home)).toBe(other);
  });

  it("a batch of the caller's own home is read in the caller's store (no `store` on the branch)", () => {
    const own = join(recorded.dir, 'own-batch');
    mkdirSync(own);
    writeFileSync(
      join(own, 'batch.json'),
      JSON.stringify({ home: recorded.home, slots: [{ task: '/t.json', index: 0, episode }] }),
    );
    const [branch] = loadBranches(own, recorded.engine);
    expect(branch.episode).toBe(episode);
    expect(branch.store).toBeUndefined();
  });
});
