import { afterEach, describe, expect, it } from 'vitest';
import { runsOwnProgramKind } from '../../shared/agent-kind';
import { StopReason } from '../../shared/contract/models';
import type { EpisodeStateInfo } from '../../shared/contract/models';
import { describeStop } from '../../renderer/src/stores/stepper/stepper-store';
import { qaStopOf, qaStopText } from '../../shared/qa/rule-label';
import { call, final, memoryTask, startScripted, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome> | null = null;
afterEach(async () => {
  await env?.engine.close();
  env?.cleanup();
  env = null;
});

function ended(reason: EpisodeStateInfo['reason']): EpisodeStateInfo {
  return {
    episode: 'ep1',
    branch: 'ep1',
    state: 'ended',
    step: 2,
    reason,
    stop_points: { before_tool: false, before_answer: false },
    held: null,
  };
}

describe('the contract carries how an episode ended as fields', () => {
  it('the runner gives the end status and reason as fields, and the contract keeps them', async () => {
    env = tempHome();
    const runner = await startScripted(env, { task: memoryTask() }, [
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    const reason = await runner.run();
    expect(reason).toMatchObject({ kind: 'ended', end: { status: 'succeeded', end_reason: 'final_answer' } });
    expect(StopReason.parse(reason).end).toEqual({ status: 'succeeded', end_reason: 'final_answer' });
    await runner.dispose();
  });

  it('the window words the fields, and no longer parses a message back', () => {
    expect(describeStop(ended({ kind: 'ended', end: { status: 'failed', end_reason: 'max_steps' } }))).toBe(
      'ended failed — it reached its step limit',
    );
    expect(
      describeStop(
        ended({
          kind: 'ended',
          end: { status: 'error', end_reason: 'sandbox_lost', detail: 'container gone' },
        }),
      ),
    ).toBe('ended error — the sandbox died: container gone');
    // A message is words for a person, not data: without the fields it is shown as it is.
    expect(describeStop(ended({ kind: 'ended', message: 'failed: max_steps' }))).toBe(
      'ended: failed: max_steps',
    );
  });
});

describe('a QA breakpoint says what stopped it', () => {
  it('in words: the rule by its label and its flag, not "QA loop" or the list of rules it might have been', () => {
    const why =
      'execute_shell called 3× with the same arguments and no change to the workspace or memory in between (steps 1, 2, 3)';
    const message = qaStopText('loop', why);
    expect(message).toBe(`QA flagged “Loop”: ${why}`);
    const paused = {
      ...ended({ kind: 'breakpoint', breakpoint: { kind: 'qa' }, message }),
      state: 'paused' as const,
    };
    expect(describeStop(paused)).toBe(`paused: QA flagged “Loop”: ${why}`);
    // The candidates offer reads the same words back from the stop reason.
    expect(qaStopOf(`paused: ${message}`)).toEqual({ label: 'Loop', message: why });
  });
});

describe('the contract carries the agent kind', () => {
  // The kind itself is the header's, listed and opened alike (branch-outcome-views.test.ts).
  it('the window asks the kind whether the agent runs a program of its own', () => {
    expect(runsOwnProgramKind('exec')).toBe(true);
    expect(runsOwnProgramKind('sandbox')).toBe(true);
    // An openai agent whose model happens to be named "exec:…" is no program of its own.
    expect(runsOwnProgramKind('openai')).toBe(false);
  });
});
