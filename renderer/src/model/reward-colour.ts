/**
 * The one mapping from a reward component to its colour, used by the timeline's chart legend
 * and the inspector's bars alike. It was two: the chart coloured by a component's place among
 * those the loaded rows had (so format_valid was blue, or green in a branch without it), the
 * inspector by sign (green or red): the same reward read as two colours side by side. The sign
 * is drawn by direction instead, in both: a penalty goes below (the chart) or left of (the
 * inspector) the zero line.
 */

/** The components the engine computes (shared/rewards.ts), each its own colour. */
const KNOWN: Readonly<Record<string, string>> = {
  format_valid: '#5fb3f9',
  repeated_action: '#8bd17c',
  tool_error: '#f0b45a',
  verifier: '#d887f0',
};

/** Colours for any other component (an imported trace's), none of them a known one's. */
const OTHERS = ['#66d9c9', '#f07a7a', '#c9c36a', '#a0a8ff', '#f29ac8', '#9fd8f5', '#e6e6e6', '#c08a5a'];

/** Where a name's colour is looked for first among {@link OTHERS}: its hash, so it stays put. */
function home(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return h % OTHERS.length;
}

/**
 * The colour of each of the components drawn together (a chart's legend, a step's bars): the
 * engine's own components have theirs; another name its hashed colour, or, when a name before
 * it (in name order) took that, the next free one. Hashed alone, `progress` and `penalty` of
 * the bench's trace were both red. Any set holding the same names colours them the same.
 */
export function rewardColours(names: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set<string>();
  const others: string[] = [];
  for (const name of [...new Set(names)].sort()) {
    const known = KNOWN[name];
    if (known === undefined) others.push(name);
    else out.set(name, known);
  }
  for (const name of others) {
    let at = home(name);
    // Past eight other components a colour repeats: the legend's names still tell them apart.
    for (let tries = 0; taken.has(OTHERS[at]) && tries < OTHERS.length; tries++)
      at = (at + 1) % OTHERS.length;
    taken.add(OTHERS[at]);
    out.set(name, OTHERS[at]);
  }
  return out;
}
