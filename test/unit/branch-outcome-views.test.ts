import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEngine } from '../../electron/engine/open-engine.js';
import { compareBranches } from '../../electron/engine/compare/compare-branches.js';
import type { EpisodeManager } from '../../electron/services/episode-manager.js';
import { LibraryService } from '../../electron/services/library-service.js';
import { storeTracePort } from '../../electron/services/trace-port.js';
import { shareData } from '../../electron/engine/share/share-data.js';
import { parseRedactions } from '../../electron/engine/export/redact.js';
import { finalRewardText, formatOutcome, returnText } from '../../shared/format-outcome.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-outcome-views-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** No live episodes: the library reads the store only. */
const noEpisodes = {
  branches: () => [],
  stateOf: () => null,
  find: () => null,
} as unknown as EpisodeManager;

/**
 * A fork's return as the list (index rows), the opened window (its summary and branch
 * tree) and compare (the service's header and the engine's) show it.
 */
async function returnsOfFork(open: boolean) {
  const engine = openEngine({ home });
  const store = engine.store;
  // Each step rewards 0.1 (the helper's default): the parent's steps count toward the fork's return.
  const parent = await writeSampleEpisode(store, { steps: 3, end: null });
  const fork = await writeSampleFork(store, parent, { at: 2, steps: 1, ...(open ? { end: null } : {}) });
  const library = new LibraryService(storeTracePort(engine), noEpisodes);
  const listed = (await library.list(undefined, 10)).episodes[0].branches.find(
    (b) => b.branch === fork.branch,
  );
  const view = await library.open(fork.branch);
  const tree = view.branches.find((b) => b.branch === fork.branch);
  const compared = await library.compare(fork.branch, parent.branch);
  const engineCompared = await compareBranches(store, fork.branch, parent.branch);
  await engine.close();
  return {
    list: listed?.return,
    window: view.summary.return,
    tree: tree?.return,
    compare: compared.a.return,
    engine: engineCompared.a.return,
    steps: [listed?.steps, view.summary.steps, tree?.steps, compared.a.steps, engineCompared.a.steps],
  };
}

describe('one return per branch: list, window, tree and compare agree on a fork', () => {
  it('while the fork is open: its inherited steps count in the list too', async () => {
    const r = await returnsOfFork(true);
    // Steps 1–2 inherited, step 3 its own: three rewards of 0.1, γ = 1 by default or less.
    expect(r.window).not.toBeNull();
    expect(r.window!).toBeGreaterThan(0.25);
    expect([r.list, r.tree, r.compare, r.engine]).toEqual([r.window, r.window, r.window, r.window]);
    expect(r.steps).toEqual([3, 3, 3, 3, 3]);
  });

  it('once the fork ended: the return of its rewards, everywhere, not the end’s word for it', async () => {
    const r = await returnsOfFork(false);
    // The helper's end says `return: 1`; the rewards (0.1 a step, the final 1 folded in) say more.
    expect(r.window!).toBeGreaterThan(1.2);
    expect([r.list, r.tree, r.compare, r.engine]).toEqual([r.window, r.window, r.window, r.window]);
  });
});

describe('formatOutcome: one rounding and one name for every view', () => {
  it('writes the return and the final reward with two decimals, named apart', () => {
    // 0.199 was "R 0.20" in the tree and "return 0.199" in compare.
    expect(returnText(0.199)).toBe('return 0.20');
    expect(finalRewardText(1)).toBe('final reward 1.00');
    expect(returnText(null)).toBe('return –');
    expect(formatOutcome(0.09801)).toBe('0.10');
  });
});

describe('one agent kind per branch: the list and the opened window read the header', () => {
  it('an imported ATIF trajectory lists as atif and opens as atif (the list said "unknown")', async () => {
    const engine = openEngine({ home });
    const ep = await writeSampleEpisode(engine.store, { agent: 'atif:trajectory.json' });
    const library = new LibraryService(storeTracePort(engine), noEpisodes);
    const listed = (await library.list(undefined, 10)).episodes[0].branches.find(
      (b) => b.branch === ep.branch,
    );
    const view = await library.open(ep.branch);
    await engine.close();
    expect([listed?.agent_kind, view.summary.agent_kind]).toEqual(['atif', 'atif']);
  });
});

describe('one set of flags and one step count per branch: the shared file says what the window says', () => {
  it('a fork: no structure flags from joining two trace files, and the window’s step count', async () => {
    const engine = openEngine({ home });
    const parent = await writeSampleEpisode(engine.store, { steps: 3 });
    const fork = await writeSampleFork(engine.store, parent, { at: 2, steps: 2 });
    const library = new LibraryService(storeTracePort(engine), noEpisodes);
    const view = await library.open(fork.branch);
    const shared = await shareData(engine.store, fork.branch, parseRedactions([]));
    await engine.close();
    const rules = (flags: readonly { rule: string; step: number | null }[]) =>
      flags.map((f) => `${f.rule}@${f.step}`).sort();
    expect(rules(shared.flags)).toEqual(rules(view.flags));
    expect(shared.flags.some((f) => f.rule === 'structure')).toBe(false);
    expect(shared.step_count).toBe(view.summary.steps);
    expect(shared.step_count).toBe(4);
  });
});
