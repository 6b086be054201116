import { describe, expect, it } from 'vitest';
import { mergeSection, roundMeasurement, type BenchReport } from '../../electron/cli/bench.js';
import { median } from '../../shared/median.js';

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
    const report: BenchReport = { sections: [], skipped: [], failed: [] };
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
});
