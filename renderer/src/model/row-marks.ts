import type { StepRow } from '../../../shared/contract/models';

/** What a mark reads of a row to say whether the row carries it. */
type MarkedRow = Pick<
  StepRow,
  'injected' | 'human' | 'overridden' | 'edited' | 'rollbacks' | 'rolled_back_to' | 'real'
>;

/** One mark of a timeline row: its text, a narrow row's short form, its words and tooltip. */
interface RowMark {
  readonly mark: string;
  /** What a narrow row shows in its place (the legend says both). */
  readonly short?: string;
  readonly className: string;
  /** What the legend says the mark means. */
  readonly words: string;
  readonly title: string;
  readonly on: (row: Partial<MarkedRow>) => boolean;
  /** What the mark says of its own row when that says more than the legend's words (the step it went back to). */
  readonly said?: (row: Partial<MarkedRow>) => string;
}

/**
 * The marks a timeline row carries when a person stepped in, or when the sandbox or the agent
 * saw something other than what happened, each with its words: what the timeline's legend says
 * and the mark's tooltip, in one table (the marks had only tooltips, and the inspector's own
 * INJ/HUM/OVR/EDIT none; ROLLBACK/↺ and ≠ had no legend).
 */
export const ROW_MARKS = {
  injected: {
    mark: 'INJ',
    className: 'mark-inj',
    words: 'injected observation',
    title: 'INJ: an observation was injected (a message a person added for the agent to read)',
    on: (r) => r.injected === true,
  },
  human: {
    mark: 'HUM',
    className: 'mark-hum',
    words: 'person typed',
    title: 'HUM: a person typed in the terminal after this step',
    on: (r) => r.human === true,
  },
  overridden: {
    mark: 'OVR',
    className: 'mark-ovr',
    words: 'overridden result',
    title: 'OVR: a person overrode the tool result, or gave it instead of running the tool',
    on: (r) => r.overridden === true,
  },
  edited: {
    mark: 'EDIT',
    className: 'mark-hum',
    words: 'edited call',
    title:
      'EDIT: a person edited the decided action (its arguments or the model’s answer) before it took effect',
    on: (r) => r.edited === true,
  },
  // Only a rollback inside a step that had not finished is "mid-step" (a hard timeout); a
  // person's rollback after a finished step read "workspace restored mid-step" too.
  rollback: {
    mark: 'ROLLBACK',
    short: '↺',
    className: 'mark-ovr',
    words: 'workspace restored mid-step',
    title:
      'ROLLBACK (↺ in a narrow window): the workspace was restored to the step before, inside this step (a hard timeout); the step went on from there',
    on: (r) => (r.rollbacks ?? 0) > 0,
  },
  rolledBack: {
    mark: 'ROLLBACK',
    short: '↺',
    className: 'mark-ovr',
    words: 'sandbox rolled back after the step',
    title:
      'ROLLBACK (↺ in a narrow window): after this step finished, the sandbox was rolled back to an earlier step; this branch ends here and a new branch goes on from that step (see the branch tree)',
    on: (r) => r.rolled_back_to !== undefined && r.rolled_back_to !== null,
    said: (r) => `rolled back to step ${r.rolled_back_to ?? '?'} after this step`,
  },
  shownOther: {
    mark: 'real ≠ shown',
    short: '≠',
    className: 'mark-flag sev-warning',
    words: 'agent shown another result',
    title:
      'real ≠ shown (≠ in a narrow window): the agent was shown a result a person gave; the tool really returned another',
    on: (r) => Boolean(r.real) && r.overridden === true,
  },
  fallback: {
    mark: '→ fallback',
    short: '≠',
    className: 'mark-flag sev-warning',
    words: 'agent shown a fallback',
    title:
      '→ fallback (≠ in a narrow window): the call failed or timed out and the agent was shown the tool’s fallback instead of what really happened',
    on: (r) => Boolean(r.real) && r.overridden !== true,
  },
} as const satisfies Record<string, RowMark>;

/** The person marks, by the name of the row's boolean that says whether it carries one. */
export const PERSON_MARKS = {
  injected: ROW_MARKS.injected,
  human: ROW_MARKS.human,
  overridden: ROW_MARKS.overridden,
  edited: ROW_MARKS.edited,
} as const;

/** Which row mark. */
export type RowMarkKey = keyof typeof ROW_MARKS;

/** The marks any of `rows` carries, in the table's order: what the legend lists. */
export function marksShown(rows: readonly Partial<MarkedRow>[]): RowMarkKey[] {
  return (Object.keys(ROW_MARKS) as RowMarkKey[]).filter((k) => rows.some((r) => ROW_MARKS[k].on(r)));
}

/** What a row's mark says of that row: its own words (`said`), else the legend's. */
export function markWords(key: RowMarkKey, row: Partial<MarkedRow>): string {
  const m: RowMark = ROW_MARKS[key];
  return m.said?.(row) ?? m.words;
}

/** A mark's form in a narrow row (`↺` for ROLLBACK), or null when it has one form. */
export function shortMark(key: RowMarkKey): string | null {
  const m: RowMark = ROW_MARKS[key];
  return m.short ?? null;
}
