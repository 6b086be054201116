import { describe, expect, it } from 'vitest';
import { formatDuration, roundDurationMs } from '../../shared/format-duration.js';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import type { ToolResult } from '../../shared/tool-result.js';
import { measuredDuration } from '../../shared/tool-duration.js';
import type { TraceEvent } from '../../shared/trace-events.js';

describe('formatDuration: the one wording of a duration', () => {
  it('says a tool call’s duration as a person reads it, never the clock’s float', () => {
    // Each number held to its unit by a no-break space (the inspector wrapped "7.9 / ms").
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

describe('a result a person gave has no duration (the tool did not run)', () => {
  const call = (step: number): TraceEvent[] =>
    [
      {
        seq: 1,
        t: 0,
        type: 'action',
        step,
        source: 'agent',
        calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a' } }],
        final: null,
      },
      {
        seq: 2,
        t: 0,
        type: 'tool_call',
        step,
        source: 'agent',
        call_id: 'c1',
        name: 'read_file',
        arguments: { path: 'a' },
      },
    ] as TraceEvent[];
  const result = (r: Partial<ToolResult>): ToolResult => ({
    ok: true,
    stdout: 'x',
    duration_ms: 5,
    bytes: 1,
    ...r,
  });

  it('a given result recorded with 0 (older traces) or null: the row says "—", not "0.0 ms"', () => {
    for (const recorded of [0, null]) {
      const events = [
        ...call(1),
        {
          seq: 3,
          t: 0,
          type: 'tool_result',
          step: 1,
          source: 'human',
          call_id: 'c1',
          name: 'read_file',
          result: result({ duration_ms: recorded }),
          replaced: true,
        },
      ] as TraceEvent[];
      const [row] = stepRowsOf(events);
      expect(row.duration_ms).toBeNull();
      expect(formatDuration(row.duration_ms)).toBe('—');
    }
  });

  it('an override after the tool ran keeps the real run’s duration; a plain result its own', () => {
    const real = result({ duration_ms: 12.5 });
    const overridden = [
      ...call(1),
      {
        seq: 3,
        t: 0,
        type: 'tool_result',
        step: 1,
        source: 'environment',
        call_id: 'c1',
        name: 'read_file',
        result: real,
      },
      {
        seq: 4,
        t: 0,
        type: 'override',
        step: 1,
        source: 'human',
        call_id: 'c1',
        real,
        shown: result({ duration_ms: 0 }),
      },
    ] as TraceEvent[];
    expect(stepRowsOf(overridden)[0].duration_ms).toBe(12.5);
    expect(measuredDuration(result({ duration_ms: 0 }), null, true)).toBeNull();
    expect(measuredDuration(result({ duration_ms: 3 }), null, false)).toBe(3);
  });
});
