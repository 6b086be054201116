import { candidateName } from '../../../shared/candidate-mark';
import type { BranchSummary } from '../../../shared/contract/models';

type Named = Pick<BranchSummary, 'branch' | 'candidate' | 'fork_step' | 'created'>;

/**
 * A branch by what tells it from the episode's others, for the episode tree, compare's branch
 * list and the window's sentences alike: a candidate by its number and action (`candidate 2 ·
 * execute_shell {command: "ls -la"}`: its siblings are all forks at the same step), else `main`
 * or `fork at step K`. Given the episode's branches (`all`), forks at the same step are numbered
 * by when they were made: `fork 2 at step 1` (three nested forks all read `fork@1`). Ids stay
 * where a person copies them (the id beside a tree node, a title), not in sentences.
 */
export function branchName(b: Named, all: readonly Named[] = [], options: { short?: boolean } = {}): string {
  if (b.candidate) return candidateName(b.candidate);
  if (b.fork_step === null) return 'main';
  const n = forkNumber(b, all);
  // The tree's short form (`fork@1`, `fork 2@1`): its line holds the id, status, steps and return,
  // and at 1024×700 "fork at step 1" pushed the return to a second line (a timeline row less).
  if (options.short) return n === null ? `fork@${b.fork_step}` : `fork ${n}@${b.fork_step}`;
  return n === null ? `fork at step ${b.fork_step}` : `fork ${n} at step ${b.fork_step}`;
}

/** A fork's number among the episode's forks at its step, by when they were made; null when it is alone. */
function forkNumber(b: Named, all: readonly Named[]): number | null {
  const same = all
    .filter((o) => !o.candidate && o.fork_step === b.fork_step)
    .sort((x, y) => x.created - y.created || x.branch.localeCompare(y.branch));
  const at = same.findIndex((o) => o.branch === b.branch);
  return same.length > 1 && at >= 0 ? at + 1 : null;
}

/** {@link branchName} of the branch with id `id` among `all`; the id itself when it is not there. */
export function branchNameOf(id: string, all: readonly Named[]): string {
  const b = all.find((o) => o.branch === id);
  return b ? branchName(b, all) : id;
}
