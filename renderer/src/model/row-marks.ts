/**
 * The marks a timeline row carries when a person stepped in, each with its words: what the
 * timeline's legend says and the mark's tooltip, in one table (the marks had only tooltips, and
 * the inspector's own INJ/HUM/OVR/EDIT none).
 */
export const PERSON_MARKS = {
  injected: {
    mark: 'INJ',
    className: 'mark-inj',
    words: 'injected observation',
    title: 'INJ: an observation was injected (a message a person added for the agent to read)',
  },
  human: {
    mark: 'HUM',
    className: 'mark-hum',
    words: 'person typed',
    title: 'HUM: a person typed in the terminal after this step',
  },
  overridden: {
    mark: 'OVR',
    className: 'mark-ovr',
    words: 'overridden result',
    title: 'OVR: a person overrode the tool result, or gave it instead of running the tool',
  },
  edited: {
    mark: 'EDIT',
    className: 'mark-hum',
    words: 'edited call',
    title:
      'EDIT: a person edited the decided action (its arguments or the model’s answer) before it took effect',
  },
} as const;

/** Which person mark: a row's boolean of the same name says whether it carries it. */
export type PersonMark = keyof typeof PERSON_MARKS;

/** The person marks any of `rows` carries, in the table's order: what the legend lists. */
export function marksShown(
  rows: readonly {
    readonly injected: boolean;
    readonly human: boolean;
    readonly overridden: boolean;
    readonly edited?: boolean;
  }[],
): PersonMark[] {
  return (Object.keys(PERSON_MARKS) as PersonMark[]).filter((k) => rows.some((r) => r[k] === true));
}
