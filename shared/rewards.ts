import { z } from 'zod';
import { normalizeCall } from './qa/normalize-call.js';
import type { TraceEvent } from './trace-events.js';

/**
 * The largest magnitude of a reward weight (`rewards.components`) and of a reward a verifier
 * writes: far past any real one (Harbor's are 0 to 1), and small enough that no product or sum
 * of them overflows — a reward of 1e308 times a weight of 2 was Infinity, written to the trace
 * as `null`, and the trace could no longer be read.
 */
export const REWARD_LIMIT = 1e6;

/**
 * The largest magnitude of a recorded reward (a weighted component, a step's total): a weight
 * times a value, each at most {@link REWARD_LIMIT} (a step's failed calls are far fewer). A
 * trace or bundle is untrusted input: past this it is refused as corrupt, so the sums every
 * view makes of its rewards stay finite.
 */
export const RECORDED_REWARD_LIMIT = 1e15;

/**
 * A number in [-limit, limit] (zod refuses NaN and ±Infinity already), its error naming the
 * range: `expected WHAT between -L and L`.
 */
export function boundedNumber(limit: number, what: string) {
  const words = `expected ${what} between -${limit} and ${limit}`;
  return z.number().min(-limit, words).max(limit, words);
}

/** Reward weights by component name (task.rewards.components). */
export type RewardWeights = Readonly<Record<string, number>>;

/** What happened in one step, as the step reward components see it. */
export interface StepOutcome {
  /** The output parsed into a valid action (tool calls or a final answer). */
  readonly formatValid: boolean;
  /** The step's calls equal the previous step's (same names and arguments). */
  readonly repeated: boolean;
  /** Calls that failed (`ok: false`) or exited non-zero. */
  readonly toolErrors: number;
}

/** A reward: each weighted component and their sum. */
export interface Reward {
  readonly components: Record<string, number>;
  readonly total: number;
}

/** A step's recorded rewards, read once for every view (the step rows, the diff, candidates). */
export interface StepRewards {
  /** The sum of the step's non-final reward totals; null when none was recorded. */
  readonly step: number | null;
  /** The episode's final reward when this step ended it; else null. */
  readonly final: number | null;
}

/**
 * What a step's `reward` events add up to: a step can record more than one (a re-decided
 * step, an injected correction), and every view sums them — never the first or the last.
 */
export function stepRewards(events: Iterable<TraceEvent>): StepRewards {
  let step: number | null = null;
  let final: number | null = null;
  for (const e of events) {
    if (e.type !== 'reward') continue;
    if (e.final) final = (final ?? 0) + e.total;
    else step = (step ?? 0) + e.total;
  }
  return { step, final };
}

/**
 * A step's reward as the inspector shows it: each component and the total summed over its
 * non-final reward events, as {@link stepRewards} sums the total (the inspector showed the last
 * event's alone beside the row's sum); null when none was recorded.
 */
export function stepRewardParts(events: Iterable<TraceEvent>): Reward | null {
  let total: number | null = null;
  const components: Record<string, number> = {};
  for (const e of events) {
    if (e.type !== 'reward' || e.final) continue;
    total = (total ?? 0) + e.total;
    for (const [k, v] of Object.entries(e.components)) components[k] = (components[k] ?? 0) + v;
  }
  return total === null ? null : { components, total };
}

/**
 * The reward of each step from 1 to `steps` (or to the last rewarded step, if later) as
 * {@link stepRewards} sums it (a step with none is 0), `finalTotal` added to the last step's:
 * what the return discounts. The return took a step's last reward event where the rows and
 * the inspector summed them all.
 */
export function episodeRewards(events: readonly TraceEvent[], steps: number, finalTotal: number): number[] {
  const perStep: number[] = new Array<number>(steps).fill(0);
  for (const e of events)
    if (e.type === 'reward' && !e.final && e.step >= 1) {
      while (perStep.length < e.step) perStep.push(0);
      perStep[e.step - 1] += e.total;
    }
  if (perStep.length > 0) perStep[perStep.length - 1] += finalTotal;
  return perStep;
}

/**
 * The step reward: indicator components (format_valid 0/1, repeated_action 0/1,
 * tool_error = failed calls) times their weights. Components without a weight are left out.
 */
export function stepReward(outcome: StepOutcome, weights: RewardWeights): Reward {
  const raw: Record<string, number> = {
    format_valid: outcome.formatValid ? 1 : 0,
    repeated_action: outcome.repeated ? 1 : 0,
    tool_error: outcome.toolErrors,
  };
  return weigh(raw, weights);
}

/**
 * The final reward from the verifier: `verifier` weight when it passed, 0 when it failed or
 * could not run; a number (the reward a verifier wrote, Harbor's) is the component's value.
 */
export function finalReward(verifier: boolean | number | null, weights: RewardWeights): Reward {
  return weigh({ verifier: typeof verifier === 'number' ? verifier : verifier ? 1 : 0 }, weights);
}

function weigh(raw: Record<string, number>, weights: RewardWeights): Reward {
  const components: Record<string, number> = {};
  let total = 0;
  for (const [name, value] of Object.entries(raw)) {
    const w = weights[name];
    if (w === undefined) continue;
    // 0 rather than -0 for a negative weight of an absent component.
    const weighted = value === 0 ? 0 : w * value;
    components[name] = weighted;
    total += weighted;
  }
  return { components, total };
}

/** The discounted return G_0 = Σ γ^t r_t over per-step rewards (the final reward folded into the last step). */
export function discountedReturn(rewards: readonly number[], gamma: number): number {
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) g = rewards[t] + gamma * g;
  return g;
}

/** The return-to-go G_t of every step. */
export function returnsToGo(rewards: readonly number[], gamma: number): number[] {
  const out = new Array<number>(rewards.length);
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    g = rewards[t] + gamma * g;
    out[t] = g;
  }
  return out;
}

/**
 * A signature of a step's calls, to detect a repeated action: each call normalized the
 * way QA's loop rule does ({@link normalizeCall}), so a `repeat` breakpoint, the repeat
 * penalty and the `loop` flag agree on what "the same call" is.
 */
export function actionSignature(calls: readonly { name: string; arguments: unknown }[]): string {
  return JSON.stringify(calls.map((c) => normalizeCall(c.name, c.arguments)));
}
