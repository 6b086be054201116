import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import { checkBranch } from '../../electron/engine/qa/check-branches.js';
import { loadedBranch } from '../../electron/engine/qa/episode-set.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

const homes: string[] = [];
afterEach(() => homes.splice(0).forEach((h) => rmSync(h, { recursive: true, force: true })));

// A Codex fork that made 2 calls (1 inherited, 1 its own) was flagged reward_hacking "after
// only 1 tool call": the rule counted the fork's own trace alone (issue 32.5). Here a fork
// answering at once after 1 inherited call: its own trace has none.
describe('QA of a fork counts the calls the agent really made', () => {
  it('inherited calls count toward qa.min_actions; the fork is not flagged', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-qa-fork-'));
    homes.push(home);
    const store = openEpisodeStore(home);
    const parent = await writeSampleEpisode(store, { steps: 3 });
    const fork = await writeSampleFork(store, parent, {
      at: 1,
      script: [{ final: 'done' }],
    });
    const info = store.resolve(fork.branch);
    const check = await checkBranch(loadedBranch(info, store.readTrace(info)), store);
    const own = store.readTrace(info).events.filter((e) => e.type === 'tool_call').length;
    expect(own).toBe(0);
    expect(check.flags.filter((f) => f.rule === 'reward_hacking')).toEqual([]);
    // The same fork checked without its history is what the window used to say.
    const alone = checkEpisode({ events: store.readTrace(info).events, torn: false });
    expect(alone.flags.find((f) => f.rule === 'reward_hacking')?.message).toMatch(
      /a reward of 1 without a single tool call/,
    );
  });
});
