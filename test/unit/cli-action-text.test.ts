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

describe('a step never decided because something failed, in show', () => {
  it('says what failed in the action line, not "(no action recorded)"', () => {
    const failed = {
      seq: 5,
      t: 1,
      type: 'error',
      step: 3,
      source: 'harness',
      code: 'model_error',
      message: 'the model endpoint failed: Connection error.',
      fatal: true,
    };
    const steps = summarizeSteps([failed as unknown as TraceEvent]);
    expect(steps.find((s) => s.step === 3)?.action).toBe('(no action: model failed)');
  });
});

describe('a result a person gave, in show', () => {
  const action = (calls: { id: string; name: string }[]) =>
    ({
      seq: 1,
      t: 1,
      type: 'action',
      step: 1,
      source: 'agent',
      final: null,
      calls: calls.map((c) => ({ ...c, arguments: { command: 'ls' } })),
    }) as unknown as TraceEvent;
  const given = (call_id: string) =>
    ({
      seq: 2,
      t: 2,
      type: 'tool_result',
      step: 1,
      source: 'human',
      call_id,
      name: 'execute_shell',
      replaced: true,
      result: { ok: true, exit_code: 0, stdout: 'x', stderr: '', duration_ms: 0 },
    }) as unknown as TraceEvent;

  it('names the call by its tool (and its place among calls of that tool), never by its trace id', () => {
    const one = summarizeSteps([
      action([{ id: 'manual_1796589687946', name: 'execute_shell' }]),
      given('manual_1796589687946'),
    ]);
    expect(one.find((s) => s.step === 1)?.injected.map((i) => i.summary)).toEqual([
      'result of execute_shell given by a person; the tool did not run',
    ]);
    const two = summarizeSteps([
      action([
        { id: 'c1', name: 'execute_shell' },
        { id: 'c2', name: 'execute_shell' },
      ]),
      given('c2'),
    ]);
    const summary = two.find((s) => s.step === 1)?.injected[0]?.summary ?? '';
    expect(summary).toBe('result of execute_shell (its 2nd call) given by a person; the tool did not run');
    expect(summary).not.toContain('c2');
  });
});
