import { z } from 'zod';
import type { Task } from '../task.js';
import type { TraceEvent } from '../trace-events.js';
import type { Flag, QaRuleId } from './flag.js';
import { checkContextOverflow } from './context-overflow.js';
import { checkDestructiveAction } from './destructive-action.js';
import { checkGaveUp } from './gave-up.js';
import { checkLoop } from './loop.js';
import { checkNetworkAssumption } from './network-assumption.js';
import { checkOutputFlood } from './output-flood.js';
import { checkUnknownTool } from './unknown-tool.js';
import { checkMemoryCorruption } from './memory-corruption.js';
import { checkRewardHacking } from './reward-hacking.js';
import type { QaInput } from './qa-input.js';

/**
 * The QA rules that can judge a prefix of an episode: what they flag at step k depends
 * only on steps 1..k (the others need the end, the verifier or other episodes, or, like
 * `goal_drift` and `fallback_abuse`, flag a step that is only known to be bad later).
 * `network_assumption` and `gave_up` also read the verifier, which a prefix lacks: live,
 * they stop at a final answer the verifier might later have vindicated. They
 * run as the episode runs and can be breakpoints (`--break qa`, `--break qa=loop`).
 */
export const LiveQaRule = z.enum([
  'loop',
  'reward_hacking',
  'memory_corruption',
  'unknown_tool',
  'destructive_action',
  'network_assumption',
  'context_overflow',
  'gave_up',
  'output_flood',
]);
/** A QA rule that runs live. */
export type LiveQaRule = z.infer<typeof LiveQaRule> & QaRuleId;

/** Each live rule's check (the same function `stepbox check` runs). */
export const LIVE_QA_RULES: Readonly<Record<LiveQaRule, (input: QaInput) => Flag[]>> = {
  loop: checkLoop,
  reward_hacking: checkRewardHacking,
  memory_corruption: checkMemoryCorruption,
  unknown_tool: checkUnknownTool,
  destructive_action: checkDestructiveAction,
  network_assumption: checkNetworkAssumption,
  context_overflow: checkContextOverflow,
  gave_up: checkGaveUp,
  output_flood: checkOutputFlood,
};

/**
 * Flags the live rules raise AT step `step` over the events so far (the prefix 1..step),
 * the same flags `stepbox check` later reports at that step. `only` narrows to one rule.
 */
export function liveFlagsAt(
  task: Task,
  events: readonly TraceEvent[],
  step: number,
  only?: LiveQaRule,
): Flag[] {
  const input: QaInput = { events, torn: false, open: true, task };
  const flags: Flag[] = [];
  for (const [id, rule] of Object.entries(LIVE_QA_RULES)) {
    if (only !== undefined && id !== only) continue;
    // A prefix has no final reward yet, so a rule's end-of-episode part stays silent.
    for (const f of rule(input)) if (f.step === step) flags.push(f);
  }
  return flags;
}
