import { z } from 'zod';

/** The QA rule ids, one per file in `shared/qa`. */
export const QaRuleId = z.enum([
  'structure',
  'loop',
  'early_termination',
  'unverified_success',
  'goal_drift',
  'reward_hacking',
  'memory_corruption',
  'fallback_abuse',
  'state_leak',
  'efficiency',
  'unknown_tool',
  'destructive_action',
  'network_assumption',
  'context_overflow',
  'gave_up',
  'output_flood',
]);
/** A QA rule id. */
export type QaRuleId = z.infer<typeof QaRuleId>;

/** How bad a flag is; `warning` and `error` mark an episode as not clean. */
export const Severity = z.enum(['info', 'warning', 'error']);
/** How bad a flag is. */
export type Severity = z.infer<typeof Severity>;

/** One QA finding: which rule, at which step (0 = the episode as a whole or setup), and why. */
export const Flag = z.object({
  rule: QaRuleId,
  step: z.number().int().nonnegative(),
  severity: Severity,
  message: z.string(),
  evidence: z.record(z.string(), z.unknown()),
});
/** One QA finding. */
export type Flag = z.infer<typeof Flag>;

const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

/** True when `severity` is at least `min` (info < warning < error). */
export function atLeast(severity: Severity, min: Severity): boolean {
  return RANK[severity] >= RANK[min];
}

/** Builds a flag. */
export function flag(
  rule: QaRuleId,
  step: number,
  severity: Severity,
  message: string,
  evidence: Record<string, unknown> = {},
): Flag {
  return { rule, step, severity, message, evidence };
}
