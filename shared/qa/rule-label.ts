import type { QaRuleId } from './flag.js';

/**
 * Each QA rule's name for people: what the window, the shared file and a saved case's
 * walkthrough show, with the rule id (what `stepbox check`, `expected.json` and a search use)
 * kept beside it in a tooltip. A Record, so a new rule without a label fails the build.
 */
const RULE_LABELS: Record<QaRuleId, string> = {
  structure: 'Broken trace',
  loop: 'Loop',
  early_termination: 'Ended early',
  unverified_success: 'Unverified success',
  goal_drift: 'Goal drift',
  reward_hacking: 'Reward hacking',
  memory_corruption: 'Memory corruption',
  fallback_abuse: 'Fallback overuse',
  state_leak: 'State leak',
  efficiency: 'Too many steps',
  unknown_tool: 'Unknown tool',
  destructive_action: 'Destructive action',
  network_assumption: 'Assumed network',
  context_overflow: 'Context overflow',
  gave_up: 'Gave up',
  output_flood: 'Output flood',
};

/**
 * Each rule's one word, for a timeline row of a narrow window: `⚑ Unverified succ…` beside
 * `Instal…` cut both the flag and the call's arguments at 1024 wide. The label stays in the
 * mark's tooltip and the flag list above the rows.
 */
const RULE_WORDS: Record<QaRuleId, string> = {
  structure: 'Broken',
  loop: 'Loop',
  early_termination: 'Early',
  unverified_success: 'Unverified',
  goal_drift: 'Drift',
  reward_hacking: 'Hacking',
  memory_corruption: 'Memory',
  fallback_abuse: 'Fallback',
  state_leak: 'Leak',
  efficiency: 'Steps',
  unknown_tool: 'Unknown',
  destructive_action: 'Destructive',
  network_assumption: 'Network',
  context_overflow: 'Context',
  gave_up: 'Gave up',
  output_flood: 'Flood',
};

/** A rule's one word (`Unverified`); an id this build does not know gives its label's first word. */
export function ruleWord(rule: string): string {
  return (RULE_WORDS as Record<string, string>)[rule] ?? ruleLabel(rule).split(' ')[0];
}

/** A rule's label for people (`Unverified success`); an id this build does not know reads as words. */
export function ruleLabel(rule: string): string {
  const known = (RULE_LABELS as Record<string, string>)[rule];
  if (known) return known;
  const words = rule.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A label's tooltip: the rule id that `stepbox check` and `expected.json` name. */
export function ruleTitle(rule: string, message?: string): string {
  return message ? `${ruleLabel(rule)} (QA rule ${rule}): ${message}` : `QA rule ${rule}`;
}

/**
 * What a QA breakpoint stopped on, in words (the engine's breakpoint message, so the stop
 * reason, the CLI and the candidates offer say it alike): it read "QA loop: …", and the
 * window's line "A QA rule (loop) flagged …" named an id where a person looks for why.
 */
export function qaStopText(rule: string, message: string): string {
  return `QA flagged “${ruleLabel(rule)}”: ${message}`;
}

/** The rule label and message of a {@link qaStopText} inside a stop reason, or null. */
export function qaStopOf(reason: string): { readonly label: string; readonly message: string } | null {
  const m = /\bQA flagged “([^”]+)”: (.*)$/.exec(reason);
  return m ? { label: m[1], message: m[2] } : null;
}
