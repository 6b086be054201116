import type { TraceEvent } from '../../../shared/trace-events.js';
import type { BranchInfo, EpisodeStore, ReadTrace } from '../trace/trace-store.js';

/** A branch's own trace and the events it inherits. */
export interface Lineage {
  readonly branch: BranchInfo;
  readonly trace: ReadTrace;
  /** Parent events up to the fork step's snapshot, then this branch's own events (headers left out). */
  readonly events: readonly TraceEvent[];
}

/**
 * The events of a branch with its ancestry: a fork at K takes its parent's events up to
 * and including snapshot K (Contracts: a fork at K takes steps 1..K from its parent).
 */
export function readLineage(store: EpisodeStore, branch: BranchInfo): Lineage {
  const trace = store.readTrace(branch);
  const own = trace.events.filter((e) => e.type !== 'header');
  if (branch.parentBranch === null || branch.forkStep === null) return { branch, trace, events: own };
  const parent = readLineage(store, store.resolve(branch.parentBranch));
  return { branch, trace, events: [...cutAtStep(parent.events, branch.forkStep), ...own] };
}

/** Events up to and including snapshot `step` (everything when there is none). */
export function cutAtStep(events: readonly TraceEvent[], step: number): TraceEvent[] {
  const at = events.findIndex((e) => e.type === 'snapshot' && e.step === step);
  if (at < 0) return events.filter((e) => e.step <= step && e.type !== 'end');
  return events.slice(0, at + 1);
}

/** The last snapshot event (the last complete step) of a list of events, or null. */
export function lastSnapshot(
  events: readonly TraceEvent[],
): Extract<TraceEvent, { type: 'snapshot' }> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'snapshot') return e;
  }
  return null;
}

/** The snapshot event of step `step`, or null. */
export function snapshotAt(
  events: readonly TraceEvent[],
  step: number,
): Extract<TraceEvent, { type: 'snapshot' }> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'snapshot' && e.step === step) return e;
  }
  return null;
}
