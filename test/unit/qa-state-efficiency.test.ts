import { describe, expect, it } from 'vitest';
import { checkEfficiency } from '../../shared/qa/efficiency.js';
import { checkStateLeak } from '../../shared/qa/state-leak.js';
import type { QaReference } from '../../shared/qa/qa-input.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const input = (t: QaTrace, reference?: QaReference) => ({
  events: t.events(),
  torn: false,
  task: qaTask(t.task),
  reference,
});

describe('state_leak rule', () => {
  const t = new QaTrace(undefined, { treeHash: 'leaky' }).step({ calls: [sh('ls')] }).end();
  it('flags snapshot 0 whose tree hash differs from the declared one', () => {
    expect(checkStateLeak(input(t, { declaredTreeHash: 'clean' }))).toMatchObject([
      { rule: 'state_leak', step: 0, severity: 'error' },
    ]);
  });
  it('flags leftover files when the declared workspace is known by files', () => {
    const flags = checkStateLeak(
      input(t, { declaredFiles: { 'a.txt': 'h1' }, snapshot0Files: { 'a.txt': 'h1', 'notes.txt': 'h2' } }),
    );
    expect(flags).toHaveLength(1);
    expect(flags[0].evidence.extra).toEqual(['notes.txt']);
  });
  it('near miss: an identical workspace, no reference, or a fork is not a leak', () => {
    expect(checkStateLeak(input(t, { declaredTreeHash: 'leaky' }))).toEqual([]);
    expect(
      checkStateLeak(input(t, { declaredFiles: { 'a.txt': 'h1' }, snapshot0Files: { 'a.txt': 'h1' } })),
    ).toEqual([]);
    expect(checkStateLeak(input(t))).toEqual([]);
    const fork = new QaTrace(undefined, { forkStep: 2 }).step({ calls: [sh('ls')] }).end();
    expect(checkStateLeak(input(fork, { declaredTreeHash: 'clean' }))).toEqual([]);
  });
});

describe('efficiency rule', () => {
  const long = new QaTrace().repeat(10, { calls: [sh('ls')] }).end();
  it('flags more than 3× the median steps of the task', () => {
    expect(checkEfficiency(input(long, { medianSteps: 3, samples: 5 }))).toMatchObject([
      { rule: 'efficiency', severity: 'warning' },
    ]);
  });
  it('flags more than 3× qa.expected_steps', () => {
    const t = new QaTrace({ name: 't', goal: 'g', qa: { expected_steps: 2 } })
      .repeat(7, { calls: [sh('ls')] })
      .end();
    expect(checkEfficiency(input(t))).toHaveLength(1);
  });
  it('flags a duration above 3× the median', () => {
    // QaTrace spaces events 100 ms apart: 10 steps ≈ 4 s.
    expect(
      checkEfficiency(input(long, { medianDurationMs: 500, samples: 4 })).some((f) => /took/.test(f.message)),
    ).toBe(true);
  });
  it('near miss: exactly 3× the median, or too few samples, is not flagged', () => {
    const nine = new QaTrace().repeat(9, { calls: [sh('ls')] }).end();
    expect(checkEfficiency(input(nine, { medianSteps: 3, samples: 5 }))).toEqual([]);
    expect(checkEfficiency(input(long, { medianSteps: 1, samples: 2 }))).toEqual([]);
  });
});
