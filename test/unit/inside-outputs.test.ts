import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../shared/trace-events.js';
import type { ChatMessage } from '../../electron/engine/agents/agent.js';
import {
  applyShownOutputs,
  compareToolOutputs,
  newToolOutputs,
  shownOutputs,
} from '../../electron/engine/external/inside-outputs.js';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import { outputResult } from '../../shared/tool-result.js';
import { formatDuration } from '../../shared/format-duration.js';
import { stepDuration } from '../../shared/step-summary.js';

let seq = 0;
const ev = (e: Record<string, unknown>) =>
  ({ seq: ++seq, t: 0, source: 'agent', ...e }) as unknown as TraceEvent;

/** Step 1 of an inside agent: one call, its output as the agent sent it. */
const history: TraceEvent[] = [
  ev({ type: 'tool_call', step: 1, call_id: 'call_1', name: 'exec_command', arguments: { cmd: 'date' } }),
  ev({
    type: 'tool_result',
    step: 1,
    call_id: 'call_1',
    name: 'exec_command',
    result: outputResult('Chunk ID: ab12\nWall time: 0.01 seconds\nOutput:\nTue\n'),
  }),
];

const request = (outputs: [string, string][]): ChatMessage[] => [
  { role: 'user', content: 'go' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{}' } }],
  },
  ...outputs.map(([id, content]) => ({ role: 'tool' as const, tool_call_id: id, content })),
];

const volatile = [/^Chunk ID: .*$/gm, /^Wall time: .*$/gm];
const normalise = (t: string) => volatile.reduce((s, re) => s.replace(re, '<volatile>'), t);

describe('tool outputs of an agent inside the sandbox', () => {
  it('reads the outputs a request adds after its last assistant message', () => {
    expect(newToolOutputs(request([['call_1', 'x']]))).toEqual([
      { call_id: 'call_1', content: 'x', index: 2 },
    ]);
  });

  it('a re-run output that differs only in volatile lines is the same; another text is drift', () => {
    const same = compareToolOutputs(
      history,
      1,
      newToolOutputs(request([['call_1', 'Chunk ID: ff00\nWall time: 0.2 seconds\nOutput:\nTue\n']])),
      normalise,
    );
    expect(same).toEqual({ kind: 'same', drift: [] });
    const drift = compareToolOutputs(
      history,
      1,
      newToolOutputs(request([['call_1', 'Chunk ID: ff00\nWall time: 0.2 seconds\nOutput:\nWed\n']])),
      normalise,
    );
    expect(drift).toMatchObject({ kind: 'same', drift: [{ call_id: 'call_1', name: 'exec_command' }] });
  });

  it('a request the recording cannot answer diverges, naming the field', () => {
    expect(compareToolOutputs(history, 1, newToolOutputs(request([])), normalise)).toMatchObject({
      kind: 'diverged',
      field: 'tool outputs',
    });
    expect(
      compareToolOutputs(history, 1, newToolOutputs(request([['call_9', 'x']])), normalise),
    ).toMatchObject({ kind: 'diverged', field: 'messages[2].tool_call_id', actual: 'call_9' });
  });

  it('an override replaces the output in this and every later request', () => {
    const overridden = [
      ...history,
      ev({
        type: 'override',
        step: 1,
        call_id: 'call_1',
        real: outputResult('Tue'),
        shown: outputResult('OVERRIDDEN'),
      }),
    ];
    const shown = shownOutputs(overridden);
    const later: ChatMessage[] = [...request([['call_1', 'Tue']]), { role: 'assistant', content: 'ok' }];
    const out = applyShownOutputs(later, shown);
    expect(out.replaced).toBe(1);
    expect(out.messages[2].content).toBe('OVERRIDDEN');
  });

  it('a call the agent ran itself has no known duration: "—" in the timeline and inspector, never "0.0 ms"', () => {
    expect(outputResult('Tue').duration_ms).toBeNull();
    const row = stepRowsOf(history).find((r) => r.step === 1);
    expect(row?.status).toBe('ok');
    expect(row?.duration_ms).toBeNull();
    expect(formatDuration(row?.duration_ms ?? null)).toBe('—');
    // One untimed call among timed ones leaves the step's sum unknown (the known part would pass for the whole).
    expect(stepDuration([{ duration_ms: 3 }, { duration_ms: null }])).toBeNull();
    expect(stepDuration([{ duration_ms: 3 }, { duration_ms: 1.5 }])).toBe(4.5);
    expect(stepDuration([])).toBeNull();
  });

  it('a drift warning marks its step in the timeline', () => {
    const rows = stepRowsOf([
      ...history,
      ev({
        type: 'warning',
        step: 1,
        source: 'harness',
        code: 'drift',
        message: 'step 1 drifted on re-execution',
      }),
    ]);
    expect(rows.find((r) => r.step === 1)?.drift).toBe('step 1 drifted on re-execution');
  });
});
