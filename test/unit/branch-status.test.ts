import { describe, expect, it } from 'vitest';
import type { BranchSummary } from '../../shared/contract/models';
import { branchStatusText, branchStatusWord } from '../../renderer/src/model/branch-status';

const branch = (
  end_reason: string | null,
  status: BranchSummary['status'] = 'interrupted',
  live = false,
) => ({
  live,
  end_reason,
  status,
});

describe("a branch's state on its badge", () => {
  it('says where the episode went on, never a bare "continued" beside a branch that stopped', () => {
    expect(branchStatusText(branch('continued_in_candidate'))).toBe('went on in a candidate');
    expect(branchStatusText(branch('superseded_by_fork'))).toBe('went on in a fork');
    // The word stays the badge's class and data-status (one per state).
    expect(branchStatusWord(branch('continued_in_candidate'))).toBe('continued');
    expect(branchStatusText(branch('rolled_back_to_3'))).toBe('rolled back to 3');
    expect(branchStatusText(branch('candidate_rejected'))).toBe('rejected');
    expect(branchStatusText(branch(null, null, true))).toBe('live');
    expect(branchStatusText(branch('final_answer', 'succeeded'))).toBe('succeeded');
    expect(branchStatusText(branch(null, null))).toBe('open');
  });
});
