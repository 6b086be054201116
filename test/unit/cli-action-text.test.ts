import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../electron/cli/episode-cli.js';
import { actionText, summarizeSteps } from '../../shared/step-summary';
import type { TraceEvent } from '../../shared/trace-events';

describe('one wording for a decided action', () => {
  it('show, the progress lines and candidates say a final answer and a parse error alike', () => {
    const final = {
      seq: 3,
      t: 1,
      type: 'action',
      step: 2,
      source: 'agent',
      final: 'Take an umbrella.',
      calls: [],
    };
    const parse = {
      seq: 4,
      t: 1,
      type: 'parse_error',
      step: 3,
      source: 'harness',
      message: 'not JSON',
      raw: '{',
    };
    expect(describeEvent(final as unknown as TraceEvent)).toBe('step 2  final: "Take an umbrella."');
    expect(describeEvent(parse as unknown as TraceEvent)).toBe('step 3  parse error: not JSON');
    const shown = summarizeSteps([final as unknown as TraceEvent]).find((s) => s.step === 2);
    expect(shown?.action).toBe('final: "Take an umbrella."');
    expect(actionText({ final: 'Take an umbrella.', calls: [] })).toBe(shown?.action);
    expect(actionText({ final: null, calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] })).toBe(
      summarizeSteps([
        { ...final, final: null, calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.txt' } }] },
      ] as unknown as TraceEvent[]).find((s) => s.step === 2)?.action,
    );
  });
});
