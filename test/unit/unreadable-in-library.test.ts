import { mkdtempSync, rmSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEpisodeStore, type DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import type { EpisodeEntry, EpisodeView, UnreadableEpisode } from '../../shared/contract/models.js';
import { breakLine, writeSampleEpisode, writeSampleFork } from '../support/traces.js';

type Listed = { episodes: EpisodeEntry[]; unreadable?: UnreadableEpisode[] };

let home: string;
let services: ReturnType<typeof createAppServices>;
let store: DiskEpisodeStore;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-unreadable-'));
  services = createAppServices(engineServicesPorts({ home }));
  store = openEpisodeStore(home, { skipMarkInterrupted: true });
});
afterEach(async () => {
  await services.dispose();
  rmSync(home, { recursive: true, force: true });
});

async function list(query?: string): Promise<Listed> {
  const answer = await services.handle('library.list', query === undefined ? {} : { query });
  if (!answer.ok) throw new Error(answer.error.message);
  return answer.value as Listed;
}

/** Every branch the library lists as readable. */
const branchesOf = (l: Listed) => l.episodes.flatMap((e) => e.branches.map((b) => b.branch));

// The CLI's views exit 3 naming the bad line; the window's library left the episode out with
// only a warning on the server's stderr.
describe('a trace that fails validation is listed as unreadable, not dropped', () => {
  it('names the episode, the file, the line and what to do, and lists the readable ones as before', async () => {
    const good = await writeSampleEpisode(store, { steps: 1 });
    const bad = await writeSampleEpisode(store, { steps: 2, end: null });
    const file = store.resolve(bad.branch).tracePath;
    breakLine(file, 5);
    const value = await list();
    expect(value.episodes.map((e) => e.episode)).toEqual([good.episode]);
    expect(value.unreadable).toHaveLength(1);
    const u = value.unreadable?.[0];
    expect(u?.episode).toBe(bad.episode);
    expect(u?.branch).toBe(bad.branch);
    expect(u?.file).toBe(file);
    // In plain words: the line, the type and the one it meant; not the schema's list of types.
    expect(u?.message).toBe(
      `${file}: line 5 has type "tool_reslt", which is not a stepbox.trace/1 event (did you mean "tool_result"?)`,
    );
    expect(u?.fix).toMatch(/npx stepbox bundle import FILE --force/);
    // The search box finds it by its id too.
    expect((await list(bad.episode.slice(-4))).unreadable).toHaveLength(1);
  });

  it('a corrupt fork of a readable episode: named with its branch; the episode opens without it; opening it says why', async () => {
    const main = await writeSampleEpisode(store, { steps: 3 });
    const fork = await writeSampleFork(store, main, { at: 1, steps: 2 });
    const file = store.resolve(fork.branch).tracePath;
    breakLine(file, 3);

    const value = await list();
    expect(branchesOf(value)).toEqual([main.branch]);
    expect(value.unreadable?.map((u) => [u.episode, u.branch, u.file])).toEqual([
      [main.episode, fork.branch, file],
    ]);
    expect(value.unreadable?.[0].message).toMatch(/: line 3 has type "tool_reslt"/);

    // A free-text search reads every trace: the fork is skipped (it is named above), not a failed search.
    const searched = await services.handle('library.search', { query: 'step-2.txt' });
    if (!searched.ok) throw new Error(searched.error.message);
    expect((searched.value as { hits: { branch: string }[] }).hits.map((h) => h.branch)).toEqual([
      main.branch,
    ]);

    // The main branch opens (its tree without the fork): the fork failed every open of its episode.
    const opened = await services.handle('episode.open', { id: main.branch });
    if (!opened.ok) throw new Error(opened.error.message);
    expect((opened.value as EpisodeView).branches.map((b) => b.branch)).toEqual([main.branch]);

    // The fork itself: the reader's one message and its fix, as data (no stack).
    const forked = await services.handle('episode.open', { id: fork.branch });
    expect(forked.ok).toBe(false);
    if (forked.ok) return;
    expect(forked.error.code).toBe('trace_corrupt');
    expect(forked.error.message).toBe(`${value.unreadable?.[0].message} Fix: ${value.unreadable?.[0].fix}`);
    expect(forked.error.message).not.toMatch(/\n\s+at /);
  });

  it('a trace damaged after it was indexed (a line rewritten, cut mid-line, garbage): listed as unreadable, not as it was', async () => {
    const rewritten = await writeSampleEpisode(store, { steps: 2, task: 'rewritten' });
    const cut = await writeSampleEpisode(store, { steps: 2, task: 'cut' });
    const garbage = await writeSampleEpisode(store, { steps: 2, task: 'garbage' });
    const fork = await writeSampleFork(store, garbage, { at: 1, steps: 1 });
    const before = await list();
    expect(branchesOf(before).sort()).toEqual(
      [rewritten.branch, cut.branch, garbage.branch, fork.branch].sort(),
    );
    expect(before.unreadable).toEqual([]);

    const fileOf = (b: string) => store.resolve(b).tracePath;
    breakLine(fileOf(rewritten.branch), 4);
    truncateSync(fileOf(cut.branch), statSync(fileOf(cut.branch)).size - 30);
    writeFileSync(fileOf(garbage.branch), Buffer.from([0x1f, 0x8b, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0xff]));

    const after = await list();
    expect(after.episodes).toEqual([]);
    const named = new Map(after.unreadable?.map((u) => [u.branch, u]));
    expect([...named.keys()].sort()).toEqual(
      [rewritten.branch, cut.branch, garbage.branch, fork.branch].sort(),
    );
    expect(named.get(rewritten.branch)?.message).toMatch(/: line 4 has type "tool_reslt"/);
    expect(named.get(cut.branch)?.message).toMatch(/is not valid gzip \(unexpected end of file\)/);
    expect(named.get(garbage.branch)?.message).toMatch(/is not valid gzip/);
    // The fork's own file is whole: the steps it inherits are in the damaged one, and that is named.
    expect(named.get(fork.branch)?.file).toBe(fileOf(garbage.branch));
    for (const u of named.values()) expect(u.fix).toMatch(/npx stepbox bundle import FILE --force/);
  });
});
