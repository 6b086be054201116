import type { BranchSummary } from '../../../shared/contract/models';

/** The step a closed branch was rolled back to (the episode went on in a new branch), or null. */
export function rolledBackTo(b: Pick<BranchSummary, 'end_reason'>): number | null {
  const m = /^rolled_back_to_(\d+)$/.exec(b.end_reason ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * A branch's state in one word, as the branch trees and Compare say it (one rule: Compare said
 * "open" and "interrupted · continued in candidate" for branches the tree called "live" and
 * "continued").
 */
export function branchStatusWord(b: Pick<BranchSummary, 'live' | 'end_reason' | 'status'>): string {
  if (b.live) return 'live';
  if (rolledBackTo(b) !== null) return 'rolled-back';
  // A candidate a person picked another over stays as a branch, marked as the rejected alternative it is.
  if (b.end_reason === 'candidate_rejected') return 'rejected';
  // The episode went on in a picked candidate or a fork: not a person's stop, not a failure.
  if (b.end_reason === 'continued_in_candidate' || b.end_reason === 'superseded_by_fork') return 'continued';
  return b.status ?? 'open';
}

/**
 * A branch's state as the trees and Compare write it on its badge: the word of
 * {@link branchStatusWord} (its class and data-status), said whole where one word misleads —
 * "continued" read as a branch that went on, beside a branch that had stopped.
 */
export function branchStatusText(b: Pick<BranchSummary, 'live' | 'end_reason' | 'status'>): string {
  const to = rolledBackTo(b);
  if (to !== null) return `rolled back to ${to}`;
  if (b.end_reason === 'continued_in_candidate') return 'went on in a candidate';
  if (b.end_reason === 'superseded_by_fork') return 'went on in a fork';
  return branchStatusWord(b);
}
