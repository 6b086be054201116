import { describe, expect, it } from 'vitest';
import { readVerifierReward } from '../../shared/verifier-reward.js';
import { finalReward } from '../../shared/rewards.js';

const DIR = '/logs/verifier';

describe('readVerifierReward (Harbor: reward.json first, else reward.txt)', () => {
  it('reads a number from reward.txt, whitespace and a newline allowed', () => {
    expect(readVerifierReward(DIR, [{ name: 'reward.txt', text: ' 1\n' }])).toEqual({
      ok: true,
      value: { reward: 1, file: '/logs/verifier/reward.txt' },
    });
    const half = readVerifierReward(DIR, [{ name: 'reward.txt', text: '0.5' }]);
    expect(half.ok && half.value.reward).toBe(0.5);
  });

  it('names the file and what it held when reward.txt holds no number', () => {
    const r = readVerifierReward(DIR, [{ name: 'reward.txt', text: 'passed\n' }]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('reward_invalid');
    expect(r.error.message).toContain('/logs/verifier/reward.txt holds "passed", not a number');
    for (const text of ['', '1 0', '0x1', 'NaN', 'Infinity']) {
      const bad = readVerifierReward(DIR, [{ name: 'reward.txt', text }]);
      expect(bad.ok, text).toBe(false);
    }
  });

  it('takes reward.json before reward.txt and keeps its numeric fields only', () => {
    const r = readVerifierReward(DIR, [
      { name: 'reward.json', text: '{"reward": 0.75, "tests": 4, "note": "x", "flag": true}' },
      { name: 'reward.txt', text: '1' },
    ]);
    expect(r).toEqual({
      ok: true,
      value: { reward: 0.75, file: '/logs/verifier/reward.json', rewards: { reward: 0.75, tests: 4 } },
    });
  });

  it('falls back to reward.txt for the scalar when reward.json has no "reward"', () => {
    const r = readVerifierReward(DIR, [
      { name: 'reward.json', text: '{"accuracy": 0.9}' },
      { name: 'reward.txt', text: '1' },
    ]);
    expect(r).toEqual({
      ok: true,
      value: { reward: 1, file: '/logs/verifier/reward.txt', rewards: { accuracy: 0.9 } },
    });
    const none = readVerifierReward(DIR, [{ name: 'reward.json', text: '{"accuracy": 0.9}' }]);
    expect(!none.ok && none.error.message).toContain('no numeric "reward" field');
  });

  it('refuses reward.json that is not a JSON object', () => {
    for (const text of ['1', '[1]', 'not json', 'null']) {
      const r = readVerifierReward(DIR, [{ name: 'reward.json', text }]);
      expect(r.ok, text).toBe(false);
      expect(!r.ok && r.error.message).toContain('/logs/verifier/reward.json');
    }
  });

  it('says what to write when there is no reward file', () => {
    const r = readVerifierReward(DIR, []);
    expect(!r.ok && r.error.code).toBe('reward_missing');
    expect(!r.ok && r.error.message).toContain('echo 1 > /logs/verifier/reward.txt');
  });

  it('the reward is the verifier component of the final reward', () => {
    expect(finalReward(0.5, { verifier: 1 }).components.verifier).toBe(0.5);
    expect(finalReward(true, { verifier: 1 }).components.verifier).toBe(1);
    expect(finalReward(null, { verifier: 1 }).total).toBe(0);
  });
});
