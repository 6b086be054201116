import type { StepRow } from '../../../../shared/contract/models';

/**
 * How an episode that is no longer live goes on, in the words every panel uses: the inspector's
 * hint, the Inject and Sandbox panels, the Replay buttons, the fork settings and the notice of a
 * released sandbox. They said three things three ways ("Reopen live here", "Fork at step 2",
 * "Fork it (Replay)"), and a released episode's buttons were greyed at the step it was cut
 * short at while the notice beside them reopened it at the step before.
 */
export interface WayOn {
  /**
   * What the branch is, as a sentence: "This episode has ended" when it ran live in this
   * window; "This is a recorded trace" when it was opened from the store and never ran here.
   */
  readonly what: string;
  /**
   * The step it goes on from: the viewed one, or, when that step never finished (no snapshot:
   * its sandbox released while the step was held), the last one before it that did. Null when
   * none can (no step with a snapshot at or before the viewed one).
   */
  readonly step: number | null;
  /** The Reopen button's words at that step (`Reopen live at step 1`). */
  readonly reopen: string;
  /** The Fork button's words at that step (`Fork at step 1`). */
  readonly fork: string;
  /**
   * Why going on with the recorded agent would end the same way, or null: its model endpoint
   * never answered, and a fork or reopen as recorded calls that endpoint again. Then Replay says
   * this and offers one thing, a fork with another agent ({@link FORK_OTHER}); Inject and Sandbox
   * point there ({@link AGAIN_FAILS_SEE_REPLAY}). Said in all three, each with its own button, it
   * was read three times (model-not-up-ended-1024x700).
   */
  readonly againFails: string | null;
}

/** The button Replay offers when the recorded agent cannot go on ({@link WayOn.againFails}). */
export const FORK_OTHER = 'Fork with another agent…';

/** What Inject and Sandbox say when the recorded agent cannot go on: Replay says why and offers the fork. */
export const AGAIN_FAILS_SEE_REPLAY = 'Its agent cannot go on as recorded: see Replay.';

/** The Reopen button's words: one label wherever a reopen is offered (Replay, fork settings, the release notice). */
export function reopenLabel(step: number): string {
  return `Reopen live at step ${step}`;
}

/** The Fork button's words: one label wherever a fork is offered (Replay, Inject, fork settings). */
export function forkLabel(step: number): string {
  return `Fork at step ${step}`;
}

/**
 * The fork settings dialog's closing button: it keeps what was typed for the Replay pane's Fork
 * and Reopen, and closes. It read "Done", which says neither save nor cancel.
 */
export const KEEP_AND_CLOSE = 'Keep and close';

/** The branch as far as the way on needs it. */
export interface WayOnInput {
  /** The viewed step's row (null: none viewed). */
  readonly viewed: StepRow | null;
  readonly rows: readonly StepRow[];
  /** The branch ran live in this window (started, stepped, forked or reopened here). */
  readonly seenLive: boolean;
  /** How it ended (null: not ended, or not read yet). */
  readonly end?: { readonly end_reason: string; readonly detail?: string | null } | null;
}

/**
 * What a branch that is not live is, in a pane's header: an episode that ran in this window and
 * ended, or a recorded trace opened from the store (the one rule: the sentence below says it too).
 */
export function notLiveWords(seenLive: boolean): 'episode ended' | 'recorded trace' {
  return seenLive ? 'episode ended' : 'recorded trace';
}

/** The way on for a branch that is not live, at its viewed step (see {@link WayOn}). */
export function wayOnAt(b: WayOnInput): WayOn {
  const what = b.seenLive ? 'This episode has ended' : 'This is a recorded trace';
  const step = stepToGoOnFrom(b.viewed, b.rows);
  const at = step ?? b.viewed?.step ?? 0;
  // The steps it answered: the row of the call that failed (its error's step) is no step taken.
  const taken = stepsTaken(b.rows);
  return {
    what,
    step,
    reopen: reopenLabel(at),
    fork: forkLabel(at),
    againFails: againFails(b.end ?? null, taken),
  };
}

/** The last step that finished (its snapshot taken), 0 when none did. */
function stepsTaken(rows: readonly StepRow[]): number {
  for (let i = rows.length - 1; i >= 0; i--) if (rows[i].snapshot) return rows[i].step;
  return 0;
}

/**
 * Why the recorded agent would fail again (see {@link WayOn.againFails}). Replay said "start it
 * again from the library" while Inject and Sandbox offered Fork and Reopen at step 0, both of
 * which called the endpoint that had never answered (model-not-up-ended-1024x700).
 */
function againFails(end: WayOnInput['end'], taken: number): string | null {
  if (end?.end_reason !== 'model_error') return null;
  const unreachable = /connection error|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|timed? ?out/i.test(
    end.detail ?? '',
  );
  // After steps it answered, it stopped: "was not reachable" read as if it never had been.
  const how =
    taken > 0
      ? `${unreachable ? 'became unreachable' : 'kept failing'} after step ${taken}`
      : unreachable
        ? 'was not reachable'
        : 'kept failing';
  return `Its model endpoint ${how}: going on as recorded would call it again, so fork it with another agent or endpoint.`;
}

/**
 * The fork and reopen buttons a pane shows: `plain` (they go on as recorded, or with the agent
 * the fork settings name), or `other-agent` (the recorded agent would fail again and no other
 * is named: one button opens the fork settings instead).
 */
export function wayOnButtons(
  way: Pick<WayOn, 'againFails'>,
  otherAgentNamed: boolean,
): 'plain' | 'other-agent' {
  return way.againFails !== null && !otherAgentNamed ? 'other-agent' : 'plain';
}

/**
 * The step a reopen or fork goes on from: the viewed step when it has a snapshot, else the
 * nearest before it that has one (what the release notice offers), else null.
 */
function stepToGoOnFrom(viewed: StepRow | null, rows: readonly StepRow[]): number | null {
  if (viewed === null) return null;
  if (viewed.snapshot) return viewed.step;
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    if (r.step < viewed.step && r.snapshot) return r.step;
  }
  return null;
}

/**
 * What to do instead of stepping an episode that is not live, in a sentence (the inspector's
 * hint after Step, Continue or their keys). `endSaid`: the end line right above it already says
 * the episode ended ("This episode was interrupted: …"), so the hint says only the way on; it
 * read "This episode has ended" right under it.
 */
export function wayOnHint(way: WayOn, endSaid = false): string {
  const what = endSaid ? '' : `${way.what}. `;
  if (way.againFails !== null) return `${what}${way.againFails}`;
  if (way.step === null)
    return `${what}To go on, select a finished step in the timeline and reopen it from Replay.`;
  return `${what}To go on, press “${way.reopen}” or “${way.fork}” under Replay.`;
}
