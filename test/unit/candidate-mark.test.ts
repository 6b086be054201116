import { describe, expect, it } from 'vitest';
import { candidateMarkOf, candidateName } from '../../shared/candidate-mark';
import { BranchSummary } from '../../shared/contract/models';
import type { HeaderEvent, TraceEvent } from '../../shared/trace-events';

const header = (candidate: unknown, fork_step: unknown = 2) =>
  ({ type: 'header', step: 0, fork_step, candidate }) as unknown as HeaderEvent;
const decided = {
  seq: 9,
  t: 1,
  type: 'action',
  step: 3,
  source: 'agent',
  final: null,
  calls: [{ id: 'c1', name: 'execute_shell', arguments: { command: 'ls -la' } }],
} as unknown as TraceEvent;

describe('a candidate branch named from its recorded header (untrusted input)', () => {
  it('names a candidate by its number and the action it tried at step K+1', () => {
    const mark = candidateMarkOf(header({ index: 1, step: 2 }), [decided]);
    expect(mark?.number).toBe(2);
    // The call as the timeline's row says it, not its arguments' JSON.
    expect(candidateName(mark!)).toBe('candidate 2 · execute_shell ls -la');
  });

  it('takes no name from an index or step that is not a whole number in range, and never one the contract refuses', () => {
    const bad: unknown[] = [NaN, -1, 1.5, 1e300, Infinity, '2', null, {}, [1], true];
    for (const index of bad) {
      expect(candidateMarkOf(header({ index, step: 2 }), [decided]), `index ${String(index)}`).toBeNull();
    }
    // A bad step falls back to the fork step; a bad fork step to 0: still a valid name.
    for (const step of bad) {
      const mark = candidateMarkOf(header({ index: 0, step }, step), [decided]);
      expect(mark?.number).toBe(1);
    }
    for (const candidate of [null, 'x', 7, [], { step: 2 }])
      expect(candidateMarkOf(header(candidate), [])).toBeNull();
    // Whatever a header says, the mark passes the contract's check of a branch's candidate.
    const mark = candidateMarkOf(header({ index: 0, step: 1e300 }), []);
    expect(BranchSummary.shape.candidate.safeParse(mark).success).toBe(true);
  });
});
