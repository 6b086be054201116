import { appendFileSync, cpSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flagRulesId, rulesIdOf } from '../../electron/engine/qa/flag-rules.js';
import { openIndex } from '../../electron/engine/trace/episode-index.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import type { EpisodeView } from '../../shared/contract/models.js';
import { writeSampleEpisode } from '../support/traces.js';

/** A flag no QA rule writes: seen in a view, it came from the index. */
const PLANTED = { rule: 'loop', step: 1, severity: 'warning', message: 'planted in the index' };

describe('opening a branch whose trace is unchanged reads its QA flags from the index (issue 19.10)', () => {
  let home: string;
  let services: AppServices | null = null;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-open-flags-'));
  });
  afterEach(async () => {
    await services?.dispose();
    services = null;
    vi.useRealTimers();
    rmSync(home, { recursive: true, force: true });
  });

  /** A fresh services instance, as a new app process would build it. */
  function fresh(): AppServices {
    services = createAppServices(engineServicesPorts({ home }));
    return services;
  }

  async function flagsOpened(s: AppServices, id: string): Promise<EpisodeView['flags']> {
    const r = await s.handle('episode.open', { id, last_rows: 10 });
    if (!r.ok) throw new Error(r.error.message);
    return (r.value as EpisodeView).flags;
  }

  /**
   * A sample episode listed once by a process now gone: the listing ran QA over its trace and
   * kept the flags with the trace's version; `computed` is what it found.
   */
  async function listedOnce() {
    const store = openEpisodeStore(home);
    const ep = await writeSampleEpisode(store, { steps: 2 });
    // Listed a while after it was written: its version had settled (file-version.ts), so the
    // seconds a loaded machine takes before the next open cannot change it.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    const first = fresh();
    expect((await first.handle('library.list', {})).ok).toBe(true);
    const computed = await flagsOpened(first, ep.branch);
    await first.dispose();
    services = null;
    return { store, ep, computed };
  }

  it('uses the flags the listing indexed for this trace version, and runs QA again once the trace changed (open-flags-index)', async () => {
    const { store, ep, computed } = await listedOnce();

    // Planted in the index: a new process opening the unchanged trace shows it, so it read them there.
    const index = openIndex(home);
    index.replaceFlags(ep.branch, [PLANTED]);
    index.close();
    const second = fresh();
    expect(await flagsOpened(second, ep.branch)).toEqual([PLANTED]);
    await second.dispose();
    services = null;

    // The trace changed (its mtime): the index's flags are not its flags any more; QA runs.
    const path = store.currentTracePath(store.resolve(ep.branch));
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    expect(await flagsOpened(fresh(), ep.branch)).toEqual(computed);
  });

  it("runs QA again for an unchanged trace whose flags an older stepbox's rules computed: their words are not this one's (flag-rules)", async () => {
    const { ep, computed } = await listedOnce();

    // What a stepbox with other rules (or other words) left in the index for this very trace.
    const index = openIndex(home);
    index.replaceFlags(ep.branch, [PLANTED]);
    index.markFlagsChecked(ep.branch, 'the rules of an older stepbox');
    expect(index.uncheckedBranches(flagRulesId())).toEqual([ep.branch]);
    index.close();
    const second = fresh();
    expect((await second.handle('library.list', {})).ok).toBe(true);
    expect(await flagsOpened(second, ep.branch)).toEqual(computed);
    // Computed again, they are kept under this stepbox's rules.
    const after = openIndex(home);
    expect(after.uncheckedBranches(flagRulesId())).toEqual([]);
    after.close();
  });

  it('names the rules by their code: the same id each time, another once a rule or a word it imports changed', () => {
    expect(flagRulesId()).toMatch(/^[0-9a-f]{16}$/);
    expect(flagRulesId()).toBe(flagRulesId());
    // A copy of shared/ (the rules and the modules they import), changed one file at a time.
    const copy = join(home, 'shared');
    cpSync(join(import.meta.dirname, '../../shared'), copy, { recursive: true });
    const qa = join(copy, 'qa');
    const before = rulesIdOf(qa);
    expect(before).toBe(flagRulesId());
    const edit = (file: string) => appendFileSync(join(copy, file), '\n// a word changed\n');
    edit('end-words.ts');
    const wordChanged = rulesIdOf(qa);
    expect(wordChanged).not.toBe(before);
    edit('qa/loop.ts');
    expect(rulesIdOf(qa)).not.toBe(wordChanged);
  });
});
