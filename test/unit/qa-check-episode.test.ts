import { describe, expect, it } from 'vitest';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import { qualityScore } from '../../shared/qa/quality.js';
import { flag } from '../../shared/qa/flag.js';
import { QaTrace, sh } from '../support/qa-traces.js';

describe('checkEpisode', () => {
  it('gives a clean successful episode no flags and quality 1', () => {
    const t = new QaTrace()
      .step({ calls: [sh('cat test_x.py')] })
      .step({ calls: [sh('python3 test_x.py')] })
      .step({ final: 'ok' })
      .end();
    expect(checkEpisode({ events: t.events(), torn: false })).toEqual({ quality: 1, flags: [] });
  });
  it('runs every rule and lowers quality per flag', () => {
    const t = new QaTrace()
      .repeat(3, { calls: [sh('python3 test_x.py', { exit_code: 1 })] })
      .step({ final: 'All done' })
      .end('failed', { success: false, exit_code: 1 });
    const { quality, flags } = checkEpisode({ events: t.events(), torn: false });
    expect(flags.map((f) => f.rule).sort()).toEqual(['loop', 'unverified_success']);
    expect(quality).toBeGreaterThan(0);
    expect(quality).toBeLessThan(0.5);
  });
  it('uses the task thresholds from the header', () => {
    const t = new QaTrace({ name: 't', goal: 'g', qa: { loop_repeats: 5 } })
      .repeat(4, { calls: [sh('x')] })
      .step({ final: 'ok' })
      .end();
    expect(checkEpisode({ events: t.events(), torn: false }).flags.filter((f) => f.rule === 'loop')).toEqual(
      [],
    );
  });
  it('keeps quality in [0, 1]', () => {
    const many = Array.from({ length: 50 }, () => flag('loop', 1, 'error', 'x'));
    expect(qualityScore('error', many)).toBeGreaterThanOrEqual(0);
    expect(qualityScore('succeeded', [])).toBe(1);
    expect(qualityScore(null, [])).toBeLessThan(qualityScore('failed', []));
  });
});
