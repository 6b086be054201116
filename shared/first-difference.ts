/**
 * Where two compared branches first differ, in one sentence: the window's Compare and
 * `stepbox diff` both say it (one source, so the two do not drift apart in their words).
 */

import type { PairVerdict } from './contract/models.js';
import { agreeing, countOf } from './count-of.js';
import { capital } from './capital.js';

/** A compared pair's two steps (a side with no step there is null). */
export interface PairSteps {
  readonly a_step: number | null;
  readonly b_step: number | null;
}

/** What the comparison's verdict sentence reads: the pairs in order and the first differing one. */
export interface ComparedSteps {
  readonly rows: readonly (PairSteps & { readonly verdict: PairVerdict })[];
  readonly diverged_row: number | null;
}

/**
 * The two sides as the sentence names them; `live` says a side is still going (paused, not
 * ended): its last step is where it is so far, not where it ends.
 */
export interface SideNames {
  readonly a: string;
  readonly b: string;
  readonly live?: { readonly a: boolean; readonly b: boolean };
}

/** A comparison's verdict in words, and whether the agent's decisions or what it saw diverged. */
export interface CompareVerdict extends FirstDifference {
  readonly diverged: boolean;
}

/**
 * Per pair, the side that has not reached its step (null: both have a step there, or the
 * other branch took a step in between, which is a difference). A side has not reached a
 * pair when it has no step there nor after: its steps all come before. Such a pair compares
 * nothing — the step is one the side has not taken (yet, when it is live) — so it is no
 * difference and no part of the count of compared steps ("different action (no such step)"
 * and "1 of 2 aligned steps differs" said so of a fork paused one step behind its parent).
 */
export function notReached(rows: readonly PairSteps[]): ('a' | 'b' | null)[] {
  const last = (side: 'a_step' | 'b_step') => rows.reduce((at, r, i) => (r[side] !== null ? i : at), -1);
  const [lastA, lastB] = [last('a_step'), last('b_step')];
  return rows.map((r, i) =>
    r.a_step === null && i > lastA ? 'a' : r.b_step === null && i > lastB ? 'b' : null,
  );
}

/**
 * A pair's step that one side has not reached, as a sentence with that side its subject: `The
 * other did not reach this step`, `Broken run has not reached it yet` (live). With the runs' names
 * as column headers beside it, "not reached in broken run" read as a header's fragment.
 */
export function notReachedText(
  side: 'a' | 'b',
  names: SideNames = { a: 'this branch', b: 'the other' },
): string {
  const live = names.live?.[side] ?? false;
  return `${capital(names[side])} ${live ? 'has not reached this step yet' : 'did not reach this step'}`;
}

/** How many of the compared steps (those both sides reached) differ: `1 of 3 compared steps differs.` */
function comparedCount(c: ComparedSteps): string {
  const reach = notReached(c.rows);
  const compared = c.rows.filter((_, i) => reach[i] === null);
  const differing = compared.filter((r) => r.verdict !== 'same').length;
  if (compared.length === 0) return '';
  if (differing === 0)
    return ` The ${countOf(compared.length, 'compared step')} ${agreeing(compared.length, 'is', 'are')} the same.`;
  return ` ${differing} of ${countOf(compared.length, 'compared step')} ${agreeing(differing, 'differs', 'differ')}.`;
}

/**
 * The verdict of a comparison in words, as the window's Compare heads it and `stepbox diff`
 * prints it: where the branches first differ and how many compared steps differ, or that none
 * does. A live side that has only not reached the other's steps yet has not diverged.
 */
export function compareVerdict(
  c: ComparedSteps,
  names: SideNames = { a: 'this branch', b: 'the other' },
): CompareVerdict {
  const first = firstDifference(c, names);
  const differing = c.rows.filter((r) => r.verdict !== 'same').length;
  if (first !== null) {
    const behind = c.diverged_row === null ? null : notReached(c.rows)[c.diverged_row];
    return {
      text: `${first.text}${comparedCount(c)}`,
      show: first.show,
      diverged: behind === null || names.live?.[behind] !== true,
    };
  }
  const text =
    differing === 0
      ? 'No difference: the same decisions, and the agent saw the same results.'
      : `The agent decided and saw the same at every step; ${countOf(differing, 'step')} ${differing === 1 ? 'differs' : 'differ'} in what really happened or in files.`;
  return { text, show: null, diverged: false };
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
    readonly rows: readonly PairSteps[];
    readonly diverged_row: number | null;
  },
  names: SideNames = { a: 'this branch', b: 'the other' },
): FirstDifference | null {
  const at = c.diverged_row;
  const row = at === null ? undefined : c.rows[at];
  if (at === null || !row) return null;
  const lastOf = (side: 'a_step' | 'b_step', rows: readonly PairSteps[]) =>
    rows.reduce((last, r) => r[side] ?? last, 0);
  const after = c.rows.slice(at + 1);
  const saw = '(what the agent did or saw)';
  if (row.a_step !== null && row.b_step !== null) {
    const other = row.b_step !== row.a_step ? `, step ${row.b_step} of ${names.b}` : '';
    return { text: `First difference at step ${row.a_step} of ${names.a}${other} ${saw}.`, show: row.a_step };
  }
  // A live side (paused) has not ended: its last step is where it is so far. A live fork
  // compared with its parent read "This branch ends at step 1" while it waited at step 1.
  const endsAt = (side: 'a' | 'b', step: number) =>
    names.live?.[side] ? `has taken ${countOf(step, 'step')} so far` : `ends at step ${step}`;
  if (row.a_step !== null) {
    const ends = after.every((r) => r.b_step === null);
    // The other, live, has only not reached this step yet: no difference, said as the mirror case.
    if (ends && names.live?.b)
      return {
        text: `${capital(names.b)} ${endsAt('b', lastOf('b_step', c.rows.slice(0, at)))}; ${names.a} goes on to step ${row.a_step}.`,
        show: row.a_step,
      };
    const where = ends
      ? `${names.b} ${endsAt('b', lastOf('b_step', c.rows.slice(0, at)))}`
      : `${names.b} has no step there`;
    return { text: `First difference at step ${row.a_step} of ${names.a}: ${where}.`, show: row.a_step };
  }
  const lastA = lastOf('a_step', c.rows.slice(0, at));
  if (after.every((r) => r.a_step === null))
    return {
      text: `${capital(names.a)} ${endsAt('a', lastA)}; ${names.b} goes on to step ${row.b_step}.`,
      show: null,
    };
  return {
    text: `First difference after step ${lastA} of ${names.a}: ${names.b} took a step there (its step ${row.b_step}) that ${names.a} has no match for.`,
    show: null,
  };
}
