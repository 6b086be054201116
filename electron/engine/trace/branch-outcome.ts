import { discountedReturn } from '../../../shared/rewards.js';
import { rowStepOf } from '../../../shared/step-summary.js';
import { DEFAULT_GAMMA } from '../../../shared/task.js';
import type { EndEvent, HeaderEvent, TraceEvent } from '../../../shared/trace-events.js';

/**
 * How a branch came out, in the words every view uses: `steps`, the discounted `return`
 * and the verifier's `final_reward`, named apart (the return folds the final reward in
 * with the step rewards; they are equal only when the step rewards are all zero and γ is 1).
 */
export interface BranchOutcome {
  /**
   * The steps the branch has: its last row's step (see {@link rowStepOf}: a step decided and
   * held before it runs counts, as the timeline shows it), never fewer than the end's count.
   */
  readonly steps: number;
  /**
   * The discounted return G_0 the end recorded; while open, the return of the rewards so
   * far (step rewards, the final one folded into the last step); null when none was recorded.
   */
  readonly return: number | null;
  /** The total of the last final reward (the verifier's), or null when none was recorded. */
  readonly final_reward: number | null;
}

/**
 * The outcome of a branch from its events (a fork's lineage or one trace file's own;
 * the header, when among them, is skipped). `end` defaults to the last `end` event.
 */
export function branchOutcome(
  header: HeaderEvent,
  events: readonly TraceEvent[],
  end: EndEvent | null = lastEnd(events),
): BranchOutcome {
  const steps = Math.max(end?.steps ?? 0, stepsOf(events), header.fork_step ?? 0);
  let finalReward: number | null = null;
  let rewarded = false;
  for (const e of events)
    if (e.type === 'reward') {
      rewarded = true;
      if (e.final) finalReward = e.total;
    }
  const recorded = end?.return;
  return {
    steps,
    return:
      recorded !== undefined
        ? recorded
        : rewarded
          ? episodeReturn(events, steps, finalReward ?? 0, gammaOf(header))
          : null,
    final_reward: finalReward,
  };
}

/**
 * The discounted return of an episode: each step's reward (`reward` events, not final),
 * the final reward folded into the last step, discounted with `gamma`.
 */
export function episodeReturn(
  events: readonly TraceEvent[],
  steps: number,
  finalTotal: number,
  gamma: number,
): number {
  const rewards: number[] = [];
  for (const e of events) if (e.type === 'reward' && !e.final) rewards[e.step - 1] = e.total;
  const perStep = Array.from({ length: steps }, (_, i) => rewards[i] ?? 0);
  if (perStep.length > 0) perStep[perStep.length - 1] += finalTotal;
  return discountedReturn(perStep, gamma);
}

/**
 * What the fatal error that ended a branch said (its code is the end's `end_reason`: a model
 * endpoint that failed, a sandbox that died), or null: the end event keeps only the code, and
 * a person needs the words (the server's answer, what to check). The last such error counts.
 */
export function endDetail(
  end: Pick<EndEvent, 'end_reason'> | null,
  errors: Iterable<{ readonly code: string; readonly message: string; readonly fatal: boolean }>,
): string | null {
  if (!end) return null;
  let said: string | null = null;
  for (const e of errors) if (e.fatal && e.code === end.end_reason) said = e.message;
  return said;
}

/**
 * The highest step with a row: the library counted only steps whose action was written and
 * said "0 steps" of a branch held before step 1 runs, beside the timeline's "1 step". A
 * rollback does not lower it: the steps after it stay in the trace (a person's rollback
 * closes the branch; `end_reason` says where).
 */
function stepsOf(events: readonly TraceEvent[]): number {
  let steps = 0;
  for (const e of events) steps = Math.max(steps, rowStepOf(e) ?? 0);
  return steps;
}

function lastEnd(events: readonly TraceEvent[]): EndEvent | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'end') return e;
  }
  return null;
}

/** The task's discount (the header keeps the parsed task, defaults filled). */
function gammaOf(header: HeaderEvent): number {
  const rewards = header.task.rewards as { gamma?: unknown } | undefined;
  return typeof rewards?.gamma === 'number' ? rewards.gamma : DEFAULT_GAMMA;
}
