/**
 * Each reward component's name for people: what the timeline's legend and the inspector's bars
 * show, the component key (what task.toml's `[rewards.components]` and the trace name) kept in
 * their tooltip. The legend printed `format_valid` and `repeated_action` as keys.
 */
const REWARD_LABELS: Readonly<Record<string, string>> = {
  format_valid: 'format valid',
  repeated_action: 'repeated action penalty',
  tool_error: 'tool error penalty',
  verifier: 'verifier',
};

/** A component's label (`repeated action penalty`); a custom key reads as words (`my_bonus` → `my bonus`). */
export function rewardLabel(component: string): string {
  return REWARD_LABELS[component] ?? component.replace(/_/g, ' ');
}

/** A label's tooltip: the component key task.toml's `[rewards.components]` names. */
export function rewardTitle(component: string): string {
  return `reward component ${component} (task.toml [rewards.components])`;
}
