import { discountedReturn, episodeRewards } from '../../../shared/rewards.js';
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
   * The steps the branch finished (their snapshot taken), never fewer than the end's count or
   * a fork's inherited steps. A step decided and held before it runs, or still running, is a
   * row of the timeline but not a step done: it is counted in {@link unfinished}.
   */
  readonly steps: number;
  /** Steps after {@link steps} that have a row and no snapshot: held, running, or never finished. */
  readonly unfinished: number;
  /**
   * The discounted return G_0 of the recorded rewards (step rewards summed per step, the final
   * one folded into the last step), discounted with {@link gamma}; null when none was recorded.
   */
  readonly return: number | null;
  /** The discount the return was worked out with (the task's `rewards.gamma`). */
  readonly gamma: number;
  /** The total of the last final reward (the verifier's), or null when none was recorded. */
  readonly final_reward: number | null;
}

/**
 * The outcome of a branch from its events (a fork's lineage or one trace file's own;
 * the header, when among them, is skipped). `end` defaults to the last `end` event.
 * The return is worked out from the reward events, the trace's record of them: an end whose
 * `return` says otherwise (the bench's 10,000-step trace wrote 1 beside rewards worth ~30)
 * is not believed over them. It is used only when no reward event was recorded.
 */
export function branchOutcome(
  header: HeaderEvent,
  events: readonly TraceEvent[],
  end: EndEvent | null = lastEnd(events),
): BranchOutcome {
  const { finished, rows } = stepsOf(events);
  const steps = Math.max(end?.steps ?? 0, finished, header.fork_step ?? 0);
  let finalReward: number | null = null;
  let rewarded = false;
  for (const e of events)
    if (e.type === 'reward') {
      rewarded = true;
      if (e.final) finalReward = e.total;
    }
  const gamma = gammaOf(header);
  return {
    steps,
    unfinished: [...rows].filter((k) => k > steps).length,
    return: rewarded ? episodeReturn(events, steps, finalReward ?? 0, gamma) : (end?.return ?? null),
    gamma,
    final_reward: finalReward,
  };
}

/**
 * The discounted return of an episode: each step's reward ({@link episodeRewards}: a step's
 * reward events summed, as every view sums them), the final reward folded into the last step,
 * discounted with `gamma`.
 */
export function episodeReturn(
  events: readonly TraceEvent[],
  steps: number,
  finalTotal: number,
  gamma: number,
): number {
  return discountedReturn(episodeRewards(events, steps, finalTotal), gamma);
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
 * The highest step whose snapshot was taken (a step done), and the steps that have a row
 * ({@link rowStepOf}: the one rule for which steps a person sees). A rollback does not lower
 * them: the steps after it stay in the trace (a person's rollback closes the branch;
 * `end_reason` says where).
 */
function stepsOf(events: readonly TraceEvent[]): { finished: number; rows: Set<number> } {
  let finished = 0;
  const rows = new Set<number>();
  for (const e of events) {
    const k = rowStepOf(e);
    if (k === null || k < 1) continue;
    rows.add(k);
    if (e.type === 'snapshot') finished = Math.max(finished, k);
  }
  return { finished, rows };
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
