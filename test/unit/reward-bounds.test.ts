import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  discountedReturn,
  episodeRewards,
  finalReward,
  RECORDED_REWARD_LIMIT,
  REWARD_LIMIT,
  stepReward,
} from '../../shared/rewards.js';
import { parseTask } from '../../shared/task.js';
import { readVerifierReward } from '../../shared/verifier-reward.js';
import { RewardEvent } from '../../shared/trace-events.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { parseTraceText, TraceCorruptError } from '../../electron/engine/trace/trace-reader.js';
import { writeSampleEpisode } from '../support/traces.js';
import { runCli } from '../support/cli.js';

// Rewards are arithmetic on numbers a task file, a verifier and a recorded trace write: a reward
// of 1e308 times a weight of 2 was Infinity, written to the trace as null (unreadable), and two
// recorded step rewards of 1e308 summed to Infinity in every view.

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-rewards-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** The error of a task whose rewards are `rewards`, or null when it parses. */
function taskError(rewards: unknown, qa?: unknown): string | null {
  const r = parseTask({ name: 't', goal: 'g', rewards, ...(qa ? { qa } : {}) }, 'task.json');
  return r.ok ? null : r.error.message;
}

/**
 * Rewrites every reward event of `episode`'s traces (gzip or plain) to carry `value` (a JSON
 * number's text, e.g. "1e308") as its components and total: a recorded input as an attacker writes it.
 */
function recordReward(episode: string, value: string): void {
  const store = openEpisodeStore(home);
  for (const b of store.listBranches(episode)) {
    const gz = b.tracePath.endsWith('.gz');
    const raw = readFileSync(b.tracePath);
    const text = (gz ? gunzipSync(raw) : raw)
      .toString('utf8')
      .split('\n')
      .map((l) =>
        l.includes('"type":"reward"')
          ? l.replace(/"components":\{[^}]*\},"total":[^,}]*/, `"components":{"x":${value}},"total":${value}`)
          : l,
      )
      .join('\n');
    writeFileSync(b.tracePath, gz ? gzipSync(Buffer.from(text)) : text);
  }
}

describe('rewards stay finite', () => {
  it('a task weight or high_reward past the bound is refused naming the key; 1.8 and -0.2 are fine', () => {
    const words = `expected a weight (such as 1 or -0.2) between -${REWARD_LIMIT} and ${REWARD_LIMIT}`;
    expect(taskError({ components: { verifier: 1e308 } })).toContain(`rewards.components.verifier: ${words}`);
    expect(taskError({ components: { tool_error: -1e7 } })).toContain(
      `rewards.components.tool_error: ${words}`,
    );
    expect(taskError({ components: { verifier: Number.NEGATIVE_INFINITY } })).toMatch(
      /rewards\.components\.verifier: /,
    );
    expect(taskError({ components: { verifier: Number.NaN } })).toMatch(/rewards\.components\.verifier: /);
    expect(taskError({ components: { verifier: 1.8, repeated_action: -0.2 } })).toBeNull();
    expect(taskError(undefined, { high_reward: 1e308 })).toContain(
      `qa.high_reward: expected a reward (such as 0.5) between -${REWARD_LIMIT}`,
    );
  });

  it("a verifier's reward past the bound, NaN, Infinity or 1e999 is an error naming the file", () => {
    const read = (name: string, text: string) => readVerifierReward('/logs/verifier', [{ name, text }]);
    for (const [name, text] of [
      ['reward.txt', '1e308'],
      ['reward.txt', '-2e6'],
      ['reward.json', '{"reward": 1e308}'],
      ['reward.json', '{"reward": 1e999}'],
    ]) {
      const r = read(name, text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('reward_invalid');
        expect(r.error.message).toMatch(
          new RegExp(
            `^/logs/verifier/${name.replace('.', '\\.')} holds the reward \\S+, outside -${REWARD_LIMIT} to ${REWARD_LIMIT}`,
          ),
        );
      }
    }
    for (const text of ['NaN', '-Infinity', 'Infinity', '1e999']) {
      const r = read('reward.txt', text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.error.message).toMatch(/not a number|outside/);
    }
    // Its other numbers past the bound are left out, never recorded.
    const r = read('reward.json', '{"reward": 1, "speed": 1e308, "accuracy": 0.5}');
    expect(r.ok && r.value.rewards).toEqual({ reward: 1, accuracy: 0.5 });
  });

  it('the largest weights and rewards weigh and sum to finite numbers, inside what a trace records', () => {
    const weights = { verifier: REWARD_LIMIT, format_valid: -REWARD_LIMIT, tool_error: REWARD_LIMIT };
    const fin = finalReward(REWARD_LIMIT, weights);
    const step = stepReward({ formatValid: true, repeated: true, toolErrors: 100 }, weights);
    for (const r of [fin, step]) {
      expect(Number.isFinite(r.total)).toBe(true);
      expect(RewardEvent.shape.total.safeParse(r.total).success).toBe(true);
    }
    const g = discountedReturn(new Array<number>(10_000).fill(RECORDED_REWARD_LIMIT), 1);
    expect(Number.isFinite(g)).toBe(true);
    // What two recorded 1e308 would have made: the trace schema stops them before any sum.
    expect(1e308 + 1e308).toBe(Infinity);
    expect(RewardEvent.shape.total.safeParse(1e308).success).toBe(false);
    expect(episodeRewards([], 2, 0)).toEqual([0, 0]);
  });

  it('a trace carrying a reward of 1e308 is refused as corrupt, naming the line and the field', async () => {
    const store = openEpisodeStore(home);
    const { episode } = await writeSampleEpisode(store, { steps: 2 });
    recordReward(episode, '1e308');
    const [branch] = store.listBranches(episode);
    const text = gunzipSync(readFileSync(branch.tracePath)).toString('utf8');
    expect(() => parseTraceText(text, 'ep.jsonl')).toThrow(TraceCorruptError);
    expect(() => parseTraceText(text, 'ep.jsonl')).toThrow(
      new RegExp(
        `ep\\.jsonl: line \\d+ \\(reward\\) does not match stepbox\\.trace/\\d+: components\\.x: expected a recorded reward \\(a weight times a reward\\) between -${RECORDED_REWARD_LIMIT}`,
      ),
    );
  });

  it('stepbox show on such a trace exits with the error, never Infinity or a crash', async () => {
    const store = openEpisodeStore(home);
    const { episode } = await writeSampleEpisode(store, { steps: 2 });
    const env = { STEPBOX_HOME: home, STEPBOX_LOG: 'error' };
    const good = await runCli(['show', episode], { env });
    expect(good.code, good.stderr).toBe(0);
    recordReward(episode, '1e308');
    const bad = await runCli(['show', episode], { env });
    expect(bad.stdout + bad.stderr).not.toMatch(/Infinity|NaN/);
    expect(bad.code, bad.stderr).not.toBe(0);
    expect(bad.signal).toBeNull();
    expect(bad.stderr).toMatch(/line \d+ \(reward\) does not match .*expected a recorded reward/);
  });
});
