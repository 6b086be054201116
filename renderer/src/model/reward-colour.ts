/**
 * The one mapping from a reward component to its colour, used by the timeline's chart legend
 * and the inspector's bars alike. It was two: the chart coloured by a component's place among
 * those the loaded rows had (so format_valid was blue, or green in a branch without it), the
 * inspector by sign (green or red): the same reward read as two colours side by side.
 */

/** The components the engine computes (shared/rewards.ts), each its own colour. */
const KNOWN: Readonly<Record<string, string>> = {
  format_valid: '#5fb3f9',
  repeated_action: '#8bd17c',
  tool_error: '#f0b45a',
  verifier: '#d887f0',
};

/** Colours for any other component (an imported trace's), picked by its name so they stay put. */
const OTHERS = ['#66d9c9', '#f07a7a', '#c9c36a', '#a0a8ff'];

/** The colour of reward component `name`, the same wherever it is drawn. */
export function rewardColour(name: string): string {
  const known = KNOWN[name];
  if (known !== undefined) return known;
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return OTHERS[h % OTHERS.length];
}
