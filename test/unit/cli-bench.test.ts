import { describe, expect, it } from 'vitest';
import { mergeSection, roundMeasurement, type BenchReport } from '../../electron/cli/bench.js';
import { median } from '../../shared/median.js';
import { untilQuiet } from '../../electron/bench/quiet-machine.js';

describe('bench runner', () => {
  it('never rounds a small float to 0 and keeps integers', () => {
    expect(roundMeasurement(0.000123456)).toBe(0.0001235);
    expect(roundMeasurement(1234.5678)).toBe(1235);
    expect(roundMeasurement(42)).toBe(42);
    expect(roundMeasurement(0)).toBe(0);
  });

  it('takes medians of odd and even counts', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow();
  });

  it('puts section keys at the top level once, prefixing a repeated or reserved key', () => {
    const report: BenchReport = { sections: [], skipped: [], failed: [], started_on: [] };
    const warnings: string[] = [];
    mergeSection(report, 'sandbox', { cold_start_ms: 612.345678, warm_target_met: true }, (m) =>
      warnings.push(m),
    );
    mergeSection(report, 'harness', { cold_start_ms: 1, skipped: 'x' }, (m) => warnings.push(m));
    expect(report.cold_start_ms).toBe(612.3);
    expect(report.warm_target_met).toBe(true);
    expect(report['harness.cold_start_ms']).toBe(1);
    expect(report['harness.skipped']).toBe('x');
    expect(report.skipped).toEqual([]);
    expect(warnings).toHaveLength(2);
  });

  it('starts a section once the machine is quiet, or says it never was and measures anyway', async () => {
    // Any load is under a bar above 100 %: no wait beyond one window.
    const calm = await untilQuiet('ui', { busyBelow: 1.01, windowMs: 20, maxMs: 5_000 });
    expect(calm).toMatchObject({ section: 'ui', quiet: true });
    expect(calm.waited_ms).toBeLessThan(5_000);
    expect(calm.busy_pct).toBeGreaterThanOrEqual(0);
    // No machine is under 0 %: it waits its longest, then reports it was not quiet.
    const busy = await untilQuiet('sandbox', { busyBelow: 0, windowMs: 20, maxMs: 100 });
    expect(busy).toMatchObject({ section: 'sandbox', quiet: false });
    expect(busy.waited_ms).toBeGreaterThanOrEqual(100);
  });
});
