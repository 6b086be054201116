import type { EndEvent, HeaderEvent } from '../../../shared/trace-events.js';
import type { DiskEpisodeStore, StoredBranch } from './episode-store.js';
import { summarizeSteps, type StepSummary } from './step-summary.js';

/** A step of a branch's timeline: where it was recorded, and whether its step is incomplete. */
export interface TimelineStep extends StepSummary {
  /** The branch whose trace recorded it (an ancestor's for steps a fork inherited). */
  readonly branch: string;
  /** True for the incomplete trailing step of an unclosed or interrupted trace. */
  readonly partial: boolean;
}

/** A branch's full history: inherited steps 1..K from its ancestors, then its own. */
export interface BranchTimeline {
  readonly branch: StoredBranch;
  readonly header: HeaderEvent;
  readonly end: EndEvent | null;
  readonly steps: readonly TimelineStep[];
  readonly warnings: readonly string[];
}

/**
 * Reads a branch with its ancestry (a fork at K takes steps 1..K from its parent), as
 * per-step summaries for `show`, exports and views. Partial steps are included, marked.
 */
export function branchTimeline(store: DiskEpisodeStore, branch: StoredBranch): BranchTimeline {
  const trace = store.readTrace(branch);
  const partialSteps = new Set(trace.partial.map((e) => e.step));
  const own: TimelineStep[] = summarizeSteps([...trace.events, ...trace.partial]).map((s) => ({
    ...s,
    branch: branch.branch,
    partial: partialSteps.has(s.step),
  }));
  let inherited: TimelineStep[] = [];
  const warnings = [...trace.warnings];
  if (branch.parentBranch !== null && branch.forkStep !== null) {
    const parent = branchTimeline(store, store.branchInfo(branch.episode, branch.parentBranch));
    inherited = parent.steps.filter((s) => s.step <= (branch.forkStep ?? 0));
    warnings.push(...parent.warnings);
  }
  // What the fork itself recorded at an inherited step (its rollback to K) joins that step.
  const merged = inherited.map((s) => {
    const extra = own.find((o) => o.step === s.step);
    return extra
      ? {
          ...s,
          injected: [...s.injected, ...extra.injected],
          errors: [...s.errors, ...extra.errors],
          warnings: [...s.warnings, ...extra.warnings],
          rollbacks: [...s.rollbacks, ...extra.rollbacks],
        }
      : s;
  });
  const fork = branch.forkStep ?? -1;
  return {
    branch,
    header: trace.header,
    end: trace.end,
    steps: [...merged, ...own.filter((o) => o.step > fork || !inherited.some((s) => s.step === o.step))],
    warnings,
  };
}
