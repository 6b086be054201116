import { candidateName } from '../../../shared/candidate-mark';
import type { BranchSummary } from '../../../shared/contract/models';

/**
 * A branch by what tells it from the episode's others, for the episode tree and compare's
 * branch list alike: a candidate by its number and action (`candidate 2 · execute_shell
 * {command: "ls -la"}`: its siblings are all forks at the same step), else `main` or
 * `fork@K`. The id stays beside it.
 */
export function branchName(b: Pick<BranchSummary, 'candidate' | 'fork_step'>): string {
  if (b.candidate) return candidateName(b.candidate);
  return b.fork_step === null ? 'main' : `fork@${b.fork_step}`;
}
