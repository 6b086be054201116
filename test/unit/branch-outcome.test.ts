import { describe, expect, it } from 'vitest';
import { branchOutcome } from '../../electron/engine/trace/branch-outcome.js';
import { summarizeBranch } from '../../electron/services/branch-summary.js';
import type { HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import { QaTrace } from '../support/qa-traces.js';
import { stepRowsOf } from '../../shared/contract/step-rows.js';

const split = (t: QaTrace): [HeaderEvent, TraceEvent[]] => {
  const [header, ...events] = t.events();
  return [header as HeaderEvent, events];
};

describe('branchOutcome: steps, return and final reward named apart', () => {
  it('an open branch: the return of the step rewards so far (discounted), no final reward', () => {
    const [header, events] = split(
      new QaTrace({ name: 't', goal: 'g', rewards: { gamma: 0.5 } })
        .step({ calls: [], reward: 1 })
        .step({ calls: [], reward: 1 }),
    );
    // G_0 = 1 + 0.5 * 1.
    expect(branchOutcome(header, events)).toEqual({ steps: 2, return: 1.5, final_reward: null });
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
    // A recorded return is taken as it was recorded.
    expect(branchOutcome(header, events, { ...end, return: 0.7 }).return).toBe(0.7);
  });

  it('no rewards at all: null, not 0; a fork with no step of its own has its fork step', () => {
    const [header, events] = split(new QaTrace({ name: 't', goal: 'g' }, { forkStep: 3 }));
    expect(branchOutcome(header, events)).toEqual({ steps: 3, return: null, final_reward: null });
  });

  it('a step decided and held before it runs counts as the timeline’s row does (library and timeline agree)', () => {
    const t = new QaTrace({ name: 't', goal: 'g' }).push({
      type: 'model_output',
      step: 1,
      source: 'agent',
      raw: 'ls',
      message: { content: null, tool_calls: [] },
    });
    const [header, events] = split(t);
    // The timeline's rows: setup (none here) and step 1, waiting to run.
    const rows = stepRowsOf(events).filter((r) => r.step >= 1);
    expect(rows.map((r) => r.step)).toEqual([1]);
    expect(branchOutcome(header, events).steps).toBe(rows.length);
    // Stopped there, the end (which counts the steps that ran) does not take the row away.
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
    expect(branchOutcome(header, ended).steps).toBe(1);
  });

  it('the window’s branch summary is the same outcome (list and diff words)', () => {
    const t = new QaTrace({ name: 't', goal: 'g' })
      .step({ calls: [], reward: 0.1 })
      .step({ final: 'done' })
      .end('succeeded', { success: true, exit_code: 0 }, { reward: 1 });
    const [header, events] = split(t);
    const info = { episode: 'ep1', branch: 'ep1', parentBranch: null, forkStep: null, tracePath: 'x' };
    const summary = summarizeBranch(info, header, events, 0, false);
    expect({ steps: summary.steps, return: summary.return, final_reward: summary.final_reward }).toEqual(
      branchOutcome(header, events),
    );
    expect(summary).not.toHaveProperty('reward');
  });
});
