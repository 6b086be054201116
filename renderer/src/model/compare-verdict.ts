import type { CompareRow, PairVerdict, WorkspaceFileDiff } from '../../../shared/contract/models';
import { isGiveUp } from '../../../shared/qa/give-up-words';

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
export function workspaceText(
  row: Pick<CompareRow, 'workspace_verdict'>,
  sides: CompareSides = UNNAMED_SIDES,
): string {
  switch (row.workspace_verdict) {
    case 'same':
      return 'same';
    case 'differs':
      return 'differs';
    case 'only_a':
      return `— only ${sides.a} has this step`;
    case 'only_b':
      return `— only ${sides.b} has this step`;
    case 'unknown':
      return '— no snapshot to compare';
  }
}

/**
 * The two sides of a comparison as a sentence names them: "this branch" and "the other", or
 * what a case calls them ("the broken run", "the fixed run": "only in the other" under a
 * "fixed run did" column left a person to work out which other).
 */
export interface CompareSides {
  readonly a: string;
  readonly b: string;
}

const UNNAMED_SIDES: CompareSides = { a: 'this branch', b: 'the other' };

/** Sides named as the table's columns are ("broken run"), or this branch and the other. */
export function compareSides(
  names: { readonly a: string; readonly b: string } | null | undefined,
): CompareSides {
  return names ? { a: `the ${names.a}`, b: `the ${names.b}` } : UNNAMED_SIDES;
}

/** A file of a row's workspace diff, in the table's own words (its columns are the sides' names, never a and b). */
export function fileStatusText(
  status: WorkspaceFileDiff['status'],
  sides: CompareSides = UNNAMED_SIDES,
): string {
  switch (status) {
    case 'only_a':
      return `only in ${sides.a}`;
    case 'only_b':
      return `only in ${sides.b}`;
    case 'differ':
      return 'differs';
  }
}

/**
 * A side that succeeded while its final answer admits it did not finish ("I could not start the
 * app"), said on its card: the reward said success and nothing on screen said otherwise
 * (compare-aligned). The words are the QA rules' (isGiveUp, unverified_success's opposite); no
 * rule flags it yet, so Compare says it. Null when the side did not succeed or its answer claims
 * completion.
 */
export function answerAdmitsFailure(
  status: string | null,
  rows: readonly Pick<CompareRow, 'a' | 'b'>[],
  side: 'a' | 'b',
): string | null {
  if (status !== 'succeeded') return null;
  const last = [...rows].reverse().find((r) => r[side] !== null)?.[side] ?? null;
  if (!last || last.status !== 'final' || !isGiveUp(last.summary)) return null;
  return `The verifier passed, but the final answer (step ${last.step}) says it did not finish.`;
}
