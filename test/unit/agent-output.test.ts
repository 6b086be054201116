import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StepboxClient } from '../../shared/contract/client';
import type { EventOf } from '../../shared/contract/events';
import type { AgentOutputChunk } from '../../electron/engine/harness/episode-controller';
import { batchAgentOutput } from '../../electron/services/agent-output-batch';
import {
  agentOutputCaption,
  createAgentOutputStore,
  recordedStepOutput,
} from '../../renderer/src/stores/agent-output/agent-output-store';

afterEach(() => {
  vi.useRealTimers();
});

function source() {
  let listener: ((c: AgentOutputChunk) => void) | null = null;
  return {
    subscribe: (l: (c: AgentOutputChunk) => void) => {
      listener = l;
      return () => (listener = null);
    },
    write: (step: number, stream: 'stdout' | 'stderr', data: string, truncated = false) =>
      listener?.({ step, stream, data, truncated }),
  };
}

describe('agent output batching (engine → window)', () => {
  it('joins chunks of one step and stream for ~16 ms, in order, and flushes on a change', () => {
    vi.useFakeTimers();
    const src = source();
    const sent: AgentOutputChunk[] = [];
    const off = batchAgentOutput(src.subscribe, (c) => sent.push(c));
    src.write(1, 'stdout', 'a');
    src.write(1, 'stdout', 'b');
    expect(sent).toEqual([]);
    src.write(1, 'stderr', 'E');
    expect(sent).toEqual([{ step: 1, stream: 'stdout', data: 'ab', truncated: false }]);
    vi.advanceTimersByTime(16);
    expect(sent.at(-1)).toEqual({ step: 1, stream: 'stderr', data: 'E', truncated: false });
    src.write(2, 'stdout', 'cut', true);
    // The chunk that hit the cap goes at once (nothing more of it follows).
    expect(sent.at(-1)).toEqual({ step: 2, stream: 'stdout', data: 'cut', truncated: true });
    src.write(2, 'stdout', 'late');
    off();
    expect(sent.at(-1)?.data).toBe('late');
    src.write(2, 'stdout', 'after');
    expect(sent.at(-1)?.data).toBe('late');
  });
});

describe('the window’s agent-output slice', () => {
  it('keeps the followed branch’s live output per step; the recorded event wins', () => {
    let push: ((p: EventOf<'episode.agentOutput'>) => void) | null = null;
    const client = {
      onEpisodeAgentOutput: (l: (p: EventOf<'episode.agentOutput'>) => void) => {
        push = l;
        return () => (push = null);
      },
    } as unknown as StepboxClient;
    const store = createAgentOutputStore(client);
    const chunk = (branch: string, step: number, data: string, truncated = false) =>
      push?.({ episode: 'ep', branch, step, stream: 'stdout', data, truncated });
    store.getState().follow('b1');
    chunk('b1', 1, 'hello ');
    chunk('b1', 1, 'world');
    chunk('other', 1, 'not mine');
    chunk('b1', 2, 'x', true);
    expect(store.getState().steps[1]).toMatchObject({ stdout: 'hello world', truncated: { stdout: false } });
    expect(store.getState().steps[2]).toMatchObject({ stdout: 'x', truncated: { stdout: true } });
    // Only the recent steps stay live (older ones are in the trace).
    for (let k = 3; k < 40; k++) chunk('b1', k, String(k));
    expect(Object.keys(store.getState().steps)).toHaveLength(20);
    expect(store.getState().steps[1]).toBeUndefined();
    store.getState().follow('b2');
    expect(store.getState().steps).toEqual({});
    const recorded = recordedStepOutput([
      {
        seq: 9,
        t: 0,
        step: 1,
        source: 'agent',
        type: 'agent_output',
        stdout: 'kept',
        stderr: '',
        bytes: { stdout: 9000, stderr: 0 },
        truncated: { stdout: true, stderr: false },
      },
    ]);
    expect(recorded).toEqual({
      stdout: 'kept',
      stderr: '',
      bytes: { stdout: 9000, stderr: 0 },
      truncated: { stdout: true, stderr: false },
    });
    expect(recordedStepOutput([])).toBeNull();
    store.getState().dispose();
    expect(push).toBeNull();
  });
});

describe('the line above a step’s agent output', () => {
  it('says the span it covers: from the end of the step before, so a line about that call is not read as this step’s', () => {
    // "printed while step 2 ran" sat above step 1's "write_file -> ok".
    const two = agentOutputCaption(2, false);
    expect(two).toBe(
      'What the agent program printed after step 1 ended, up to the end of step 2: a line it prints once step 1’s call returns shows here, not under step 1.',
    );
    expect(two).not.toMatch(/while step 2 ran/);
    expect(agentOutputCaption(1, false)).toBe(
      'What the agent program printed from its start to the end of step 1.',
    );
    expect(agentOutputCaption(3, true)).toMatch(/^Step 3 is running/);
  });
});
