import { describe, expect, it } from 'vitest';
import { callOverhead, differenceOf, figureOf, targetMet } from '../../electron/bench/figure.js';

describe('bench figures are measured or null, never clamped', () => {
  it('takes the overhead from the same calls: median of call minus its own command', () => {
    const f = callOverhead([
      { callMs: 4.0, commandMs: 3.2 },
      { callMs: 5.0, commandMs: 3.0 },
      { callMs: 3.5, commandMs: 3.1 },
    ]);
    expect(f.value).toBeCloseTo(0.8);
    expect(targetMet(f, (v) => v <= 1)).toBe(true);
  });

  it('reports null with a reason when a call is faster on the host than its command inside, and the target is not met', () => {
    // Under load the old rule subtracted two different samples (6.2 ms alone, 4.0 ms a call)
    // and clamped the difference to 0: a target met that nothing measured.
    const f = callOverhead([
      { callMs: 4.0, commandMs: 6.2 },
      { callMs: 4.1, commandMs: 3.0 },
    ]);
    expect(f.value).toBeNull();
    expect(f.reason).toMatch(/clocks disagree/);
    expect(targetMet(f, (v) => v <= 1)).toBe(false);
  });

  it('reports null when the sandbox did not give the command its own time, or nothing was timed', () => {
    expect(callOverhead([{ callMs: 2, commandMs: undefined }])).toEqual({
      value: null,
      reason: "the sandbox did not report a command's own time",
    });
    expect(callOverhead([]).value).toBeNull();
  });

  it('never meets a target from a missing or non-finite figure', () => {
    expect(targetMet(figureOf(undefined, 'not run'), () => true)).toBe(false);
    expect(targetMet(figureOf(Number.NaN, 'no commit'), () => true)).toBe(false);
    expect(targetMet(figureOf(Infinity, 'divided by 0'), () => true)).toBe(false);
    expect(targetMet(figureOf(3, ''), (v) => v < 5)).toBe(true);
  });
});

describe('a difference of two timings is measured or null', () => {
  it('takes the median of per-sample differences and never clamps a negative one to 0', () => {
    expect(differenceOf([0.5, 0.7, 0.6], 'x').value).toBeCloseTo(0.6);
    const noise = differenceOf([-0.4, 0.1, -0.2], 'external_mcp_call_overhead_ms');
    expect(noise.value).toBeNull();
    expect(noise.reason).toMatch(/external_mcp_call_overhead_ms: the median difference was -0.20 ms/);
    expect(targetMet(noise, (v) => v <= 3)).toBe(false);
    expect(differenceOf([], 'x').value).toBeNull();
  });
});
