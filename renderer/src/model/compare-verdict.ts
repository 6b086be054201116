import type { CompareRow, PairVerdict } from '../../../shared/contract/models';
import { capital } from './capital';

/** Each verdict in words a person reads. */
export const VERDICT_TEXT: Record<PairVerdict, string> = {
  same: 'same',
  different_action: 'different action',
  different_result: 'different result',
  different_files: 'different files',
};

/**
 * A compare row's verdict with what differs, so a row whose two sides read alike still
 * says why it is not the same: `different result: stdout differs`, `different files: a.txt`,
 * `different action: execute_shell arguments: command differs` (the tool the same).
 */
export function verdictText(row: Pick<CompareRow, 'verdict' | 'differs' | 'workspace'>): string {
  const base = VERDICT_TEXT[row.verdict];
  const what =
    row.verdict === 'different_result' || row.verdict === 'different_action'
      ? (row.differs ?? [])
      : row.verdict === 'different_files'
        ? row.workspace.map((w) => w.path)
        : [];
  return what.length ? `${base}: ${what.join('; ')}` : base;
}

/**
 * A row's workspace cell when no file diff is listed: a side with no step reads as such
 * (`— only the other has this step`), never `same` (a step only one branch took left nothing
 * to compare: "same" under "Files that differ at the end: greet.py" was a new hire's puzzle).
 */
export function workspaceText(row: Pick<CompareRow, 'workspace_verdict'>): string {
  switch (row.workspace_verdict) {
    case 'same':
      return 'same';
    case 'differs':
      return 'differs';
    case 'only_a':
      return '— only this branch has this step';
    case 'only_b':
      return '— only the other has this step';
    case 'unknown':
      return '— no snapshot to compare';
  }
}

/** The first difference of a comparison, in a sentence, and the step of the shown branch to show (null: none). */
export interface FirstDifference {
  readonly text: string;
  /** A step the shown branch (A) has, or null: "show step N" is offered only for such a step. */
  readonly show: number | null;
}

/**
 * Where two compared branches first differ, said truthfully: at a step both have (`First
 * difference at step 2 of this branch`), at a step only this branch has, or where this branch
 * has none (it ends there: `this branch ends at step 1; the other goes on to step 2`, or the
 * other took a step in between). "show step N" is offered only for a step this branch has: a
 * step past its end left the window describing a step that does not exist.
 */
export function firstDifference(
  c: {
    readonly rows: readonly Pick<CompareRow, 'a_step' | 'b_step'>[];
    readonly diverged_row: number | null;
  },
  names: { readonly a: string; readonly b: string } = { a: 'this branch', b: 'the other' },
): FirstDifference | null {
  const at = c.diverged_row;
  const row = at === null ? undefined : c.rows[at];
  if (at === null || !row) return null;
  const lastOf = (side: 'a_step' | 'b_step', rows: readonly Pick<CompareRow, 'a_step' | 'b_step'>[]) =>
    rows.reduce((last, r) => r[side] ?? last, 0);
  const after = c.rows.slice(at + 1);
  const saw = '(what the agent did or saw)';
  if (row.a_step !== null && row.b_step !== null) {
    const other = row.b_step !== row.a_step ? `, step ${row.b_step} of ${names.b}` : '';
    return { text: `First difference at step ${row.a_step} of ${names.a}${other} ${saw}.`, show: row.a_step };
  }
  if (row.a_step !== null) {
    const ends = after.every((r) => r.b_step === null);
    const where = ends
      ? `${names.b} ends at step ${lastOf('b_step', c.rows.slice(0, at))}`
      : `${names.b} has no step there`;
    return { text: `First difference at step ${row.a_step} of ${names.a}: ${where}.`, show: row.a_step };
  }
  const lastA = lastOf('a_step', c.rows.slice(0, at));
  if (after.every((r) => r.a_step === null))
    return {
      text: `${capital(names.a)} ends at step ${lastA}; ${names.b} goes on to step ${row.b_step}.`,
      show: null,
    };
  return {
    text: `First difference after step ${lastA} of ${names.a}: ${names.b} took a step there (its step ${row.b_step}) that ${names.a} has no match for.`,
    show: null,
  };
}
