import { describe, expect, it } from 'vitest';
import { branchOutcome } from '../../electron/engine/trace/branch-outcome.js';
import { summarizeBranch } from '../../electron/services/branch-summary.js';
import type { HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import { QaTrace } from '../support/qa-traces.js';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import { discountedReturnText, stepsText } from '../../shared/format-outcome.js';

const split = (t: QaTrace): [HeaderEvent, TraceEvent[]] => {
  const [header, ...events] = t.events();
  return [header as HeaderEvent, events];
};

/** The trace with step `step` decided (its model output recorded) and held before it runs. */
const heldAt = (t: QaTrace, step: number): QaTrace =>
  t.push({
    type: 'model_output',
    step,
    source: 'agent',
    raw: 'ls',
    message: { content: null, tool_calls: [] },
  });

describe('branchOutcome: steps, return and final reward named apart', () => {
  it('an open branch: the return of the step rewards so far (discounted), no final reward', () => {
    const [header, events] = split(
      new QaTrace({ name: 't', goal: 'g', rewards: { gamma: 0.5 } })
        .step({ calls: [], reward: 1 })
        .step({ calls: [], reward: 1 }),
    );
    // G_0 = 1 + 0.5 * 1.
    expect(branchOutcome(header, events)).toEqual({
      steps: 2,
      unfinished: 0,
      return: 1.5,
      gamma: 0.5,
      final_reward: null,
    });
  });

  it('an ended branch: the end’s return and the verifier’s final reward, which differ', () => {
    const t = new QaTrace({ name: 't', goal: 'g', rewards: { gamma: 1 } })
      .step({ calls: [], reward: 0.1 })
      .step({ final: 'done', reward: 0.1 })
      .end('succeeded', { success: true, exit_code: 0 }, { reward: 1 });
    const [header, events] = split(t);
    // The fixture's end carries no return: it is the rewards', the final one folded into the last step.
    const outcome = branchOutcome(header, events);
    expect(outcome).toMatchObject({ steps: 2, final_reward: 1 });
    expect(outcome.return).toBeCloseTo(1.2, 10);
    const end = events.at(-1)!;
    if (end.type !== 'end') throw new Error('no end');
    // An end whose return says otherwise is not believed over the rewards (the bench's trace
    // wrote 1 beside rewards worth ~30, and the library said "return 1.00").
    expect(branchOutcome(header, events, { ...end, return: 0.7 }).return).toBeCloseTo(1.2, 10);
    // Without a reward event, the end's return is all there is.
    const bare = events.filter((e) => e.type !== 'reward');
    expect(branchOutcome(header, bare, { ...end, return: 0.7 }).return).toBe(0.7);
  });

  it('a step with two reward events: the return sums them, as the rows and the inspector do', () => {
    const t = new QaTrace({ name: 't', goal: 'g', rewards: { gamma: 0.5 } })
      .step({ calls: [], reward: 1 })
      .step({ calls: [], reward: 1 });
    const [header, events] = split(t);
    // A correction recorded at step 1 after its first reward (an injected correction, a re-decision).
    const extra = { ...events.find((e) => e.type === 'reward' && e.step === 1)!, seq: 999, total: -0.5 };
    const twice = [...events, extra as TraceEvent];
    const rows = stepRowsOf(twice).filter((r) => r.step >= 1);
    expect(rows.map((r) => r.reward)).toEqual([0.5, 1]);
    // G_0 = (1 - 0.5) + 0.5 * 1; the old rule took step 1's last event alone: -0.5 + 0.5 = 0.
    expect(branchOutcome(header, twice).return).toBeCloseTo(1, 10);
  });

  it('no rewards at all: null, not 0; a fork with no step of its own has its fork step', () => {
    const [header, events] = split(new QaTrace({ name: 't', goal: 'g' }, { forkStep: 3 }));
    expect(branchOutcome(header, events)).toMatchObject({
      steps: 3,
      unfinished: 0,
      return: null,
      final_reward: null,
    });
  });

  it('a step decided and held before it runs is a row, not a step done: "step 1 waiting"', () => {
    const [header, events] = split(heldAt(new QaTrace({ name: 't', goal: 'g' }), 1));
    // The timeline's rows: setup (none here) and step 1, waiting to run.
    const rows = stepRowsOf(events).filter((r) => r.step >= 1);
    expect(rows.map((r) => r.step)).toEqual([1]);
    expect(branchOutcome(header, events)).toMatchObject({ steps: 0, unfinished: 1 });
    expect(stepsText(0, 1, true)).toBe('step 1 waiting');
    // Under way, as its row and the stepper bar say it.
    expect(stepsText(0, 1, true, true)).toBe('step 1 running');
    // Stopped there, the end (which counts the steps that ran) keeps the row as unfinished.
    const ended = [
      ...events,
      {
        ...events[0],
        seq: 99,
        type: 'end',
        status: 'interrupted',
        end_reason: 'stopped',
        verifier: null,
        steps: 0,
      } as TraceEvent,
    ];
    expect(branchOutcome(header, ended)).toMatchObject({ steps: 0, unfinished: 1 });
  });

  it('one step done and the next held: "step 2 waiting", never "2 steps"', () => {
    const t = new QaTrace({ name: 't', goal: 'g' }).step({ calls: [], reward: 0.1 });
    const [header, events] = split(heldAt(t, 2));
    const outcome = branchOutcome(header, events);
    expect(outcome).toMatchObject({ steps: 1, unfinished: 1 });
    expect(stepsText(outcome.steps, outcome.unfinished, true)).toBe('step 2 waiting');
    expect(stepsText(outcome.steps, outcome.unfinished, false)).toBe('step 2 unfinished');
    expect(stepsText(3, 0, true)).toBe('3 steps');
    // None: beside row 0 (the setup) "0 steps" read as a contradiction.
    expect(stepsText(0, 0, false)).toBe('only step 0, the setup');
    expect(stepsText(0, 0, true)).toBe('only step 0, the setup');
    // Two rows waiting at once, by their numbers, as the scrubber says them.
    expect(stepsText(3, 2, false)).toBe('steps 4–5 unfinished');
  });

  it('the return says its discount unless γ is 1 (when it is the plain sum of the rewards)', () => {
    expect(discountedReturnText(-0.4851, 0.99)).toBe('return -0.49 (γ=0.99)');
    expect(discountedReturnText(-0.5, 1)).toBe('return -0.50');
    expect(discountedReturnText(null, 0.99)).toBe('return –');
  });

  it('the window’s branch summary is the same outcome (list and diff words)', () => {
    const t = new QaTrace({ name: 't', goal: 'g' })
      .step({ calls: [], reward: 0.1 })
      .step({ final: 'done' })
      .end('succeeded', { success: true, exit_code: 0 }, { reward: 1 });
    const [header, events] = split(t);
    const info = { episode: 'ep1', branch: 'ep1', parentBranch: null, forkStep: null, tracePath: 'x' };
    const summary = summarizeBranch(info, header, events, 0, false);
    expect({
      steps: summary.steps,
      unfinished: summary.unfinished,
      return: summary.return,
      gamma: summary.gamma,
      final_reward: summary.final_reward,
    }).toEqual(branchOutcome(header, events));
    expect(summary).not.toHaveProperty('reward');
  });
});
