import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openEngine } from '../../electron/engine/open-engine.js';
import { BranchCache } from '../../electron/services/branch-cache.js';
import { storeTracePort } from '../../electron/services/trace-port.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-branch-cache-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('the window’s branch cache (issue 33.9)', () => {
  it('a branch asked for by its id again is not looked for in the store while its trace files are unchanged', async () => {
    const engine = openEngine({ home, sweep: false });
    // The parent stays open (a live branch): a new step of it changes what the fork inherits.
    const ep = await writeSampleEpisode(engine.store, { steps: 3, end: null });
    const fork = await writeSampleFork(engine.store, ep, { at: 2, steps: 2 });
    const port = storeTracePort(engine);
    const resolve = vi.spyOn(port, 'resolve');
    const cache = new BranchCache(port);

    const first = await cache.load(fork.branch);
    expect(resolve).toHaveBeenCalled();
    resolve.mockClear();
    // The inspector's every step and every neighbour fetched ahead loads the branch: each was
    // the store's scan of every episode folder and meta.json, for the fork and its parent.
    for (let i = 0; i < 5; i++) expect(await cache.load(fork.branch)).toBe(first);
    expect(await cache.load(ep.episode)).toBe(await cache.load(ep.branch));
    resolve.mockClear();
    expect(await cache.load(ep.episode)).toBeDefined();
    expect(resolve).not.toHaveBeenCalled();

    // A prefix is resolved each time: which branch it names can change as branches are made.
    await cache.load(fork.branch.slice(0, -2));
    expect(resolve).toHaveBeenCalledWith(fork.branch.slice(0, -2));

    // The parent's trace changed: the fork is read again (what it inherits is read from it).
    ep.writer.append({ type: 'injected', step: 3, source: 'injected', role: 'user', content: 'late' });
    ep.writer.commitStep();
    resolve.mockClear();
    const again = await cache.load(fork.branch);
    expect(again).not.toBe(first);
    expect(resolve).toHaveBeenCalledWith(fork.branch);

    // One snapshot store per episode, kept: the manifests a step's Files tab reads are read once.
    expect(port.snapshots(ep.episode)).toBe(port.snapshots(ep.episode));

    // The fork's trace gone (its branch deleted): the store says so, never the kept copy.
    rmSync(engine.store.resolve(fork.branch).tracePath);
    await expect(cache.load(fork.branch)).rejects.toMatchObject({ code: 'not_found' });
    await ep.writer.close({
      steps: 3,
      return: 0,
      status: 'interrupted',
      end_reason: 'stopped',
      verifier: null,
      step: 3,
    });
    await engine.close();
  });
});
