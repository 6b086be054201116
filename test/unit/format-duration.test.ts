import { describe, expect, it } from 'vitest';
import { formatDuration, roundDurationMs } from '../../shared/format-duration.js';

describe('formatDuration: the one wording of a duration', () => {
  it('says a tool call’s duration as a person reads it, never the clock’s float', () => {
    expect(formatDuration(3.2145678)).toBe('3.2 ms');
    expect(formatDuration(0.04)).toBe('0.0 ms');
    expect(formatDuration(9.96)).toBe('10 ms');
    expect(formatDuration(412.4)).toBe('412 ms');
    expect(formatDuration(999.7)).toBe('1.00 s');
    expect(formatDuration(1240)).toBe('1.24 s');
    expect(formatDuration(12_345)).toBe('12.3 s');
    expect(formatDuration(59_990)).toBe('1 min 00 s');
    expect(formatDuration(125_000)).toBe('2 min 05 s');
    expect(formatDuration(Number.NaN)).toBe('–');
    // Not known (a call the agent ran itself): a dash, not a false 0.0 ms.
    expect(formatDuration(null)).toBe('—');
  });
  it('rounds a raw duration_ms to the 0.1 ms the words show', () => {
    expect(roundDurationMs(3.6360289999993256)).toBe(3.6);
    expect(roundDurationMs(1240)).toBe(1240);
  });
});
