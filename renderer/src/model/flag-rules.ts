import type { FlagSummary } from '../../../shared/contract/models';
import { ruleLabel } from '../../../shared/qa/rule-label';

/**
 * `Unknown tool ×2 · Unverified success`: the rules a branch's QA flags name, each once with its
 * count, in the order the flags come (the folded flag list's one line says which failures QA saw).
 */
export function flagRules(flags: readonly FlagSummary[]): string {
  const counts = new Map<string, number>();
  for (const f of flags) counts.set(f.rule, (counts.get(f.rule) ?? 0) + 1);
  return [...counts].map(([rule, n]) => (n > 1 ? `${ruleLabel(rule)} ×${n}` : ruleLabel(rule))).join(' · ');
}
