import type { StepperState } from './stepper-store';
import {
  endNotice,
  selectLastStep,
  selectRecordedHint,
  selectViewedRow,
  selectWaitsForPerson,
  selectWayOn,
} from './stepper-store';
import { forkLabel, reopenLabel } from './way-on';

/**
 * Why the stepper's controls cannot act now, one function per control, in words a person
 * acts on (null: it can). The components disable the control and show the sentence.
 */

/**
 * What the panels beside the Timeline say of a branch whose open failed (an unreadable trace):
 * the Timeline says why and the fix; they said "ended before its first step" and "Fork it".
 */
export const NOT_OPENED = 'the branch could not be opened: the Timeline says why, and what to do';

/** Step (F10) and Continue (F5). */
export function whyNoStep(s: StepperState): string | null {
  if (s.branch === null) return 'No episode is open: start a case or a sample task from the library.';
  if (!s.live) return selectRecordedHint(s);
  if (s.state === 'running') return 'The episode is running: pause it first.';
  if (s.busy) return 'Waiting for the last request to finish.';
  return null;
}

/**
 * What the Replay panel says while the open branch has no step to scrub: what can be done
 * next, said only when it can (an episode that ended at setup was told to take a step with
 * Step and Continue greyed).
 */
export function whyNothingToScrub(s: StepperState): string {
  if (s.branch === null) return 'Nothing to scrub yet: open an episode and take a step.';
  if (s.load === 'error') return `Nothing to scrub: ${NOT_OPENED}.`;
  // The manual agent asks the person for its first step: nothing is under way until they answer.
  if (selectWaitsForPerson(s))
    return 'Nothing to scrub yet: the agent is waiting for you to decide its first step (Inject, Decision tab).';
  if (s.live && s.state === 'running') return 'Nothing to scrub yet: its first step is under way.';
  // Beside step 0's row (the setup, selected in the timeline) "no step" read as a contradiction.
  const none = (): string =>
    s.rows.length > 0 ? 'the episode has only step 0, its setup' : 'the episode has no step';
  const noStep = whyNoStep(s);
  if (noStep === null)
    return `Nothing to scrub yet: ${none()}. Take one (Step, F10) or run it (Continue, F5).`;
  // The short reason: the fatal error's own words are said once, above the inspector.
  const ended = endNotice(s, false);
  // Its agent cannot go on as recorded (an endpoint that never answered): the way on, a fork with
  // another agent, said here alone (Inject and Sandbox point here). Not after the end's short words:
  // "the model endpoint kept failing" beside "was not reachable" said the failure twice, two ways,
  // and the end line above the inspector says it whole.
  const again = selectWayOn(s).againFails;
  if (again) return `It ended before its first step. ${again}`;
  if (ended)
    return `${ended} It ended before its first step, so there is nothing to scrub: start it again from the library.`;
  // Ended, its end not read yet: the way on names buttons of this very panel, which has none here.
  if (!s.live)
    return `${selectWayOn(s).what}. It ended before its first step, so there is nothing to scrub: start it again from the library.`;
  return `Nothing to scrub yet: ${none()}. ${noStep}`;
}

/** Pause. */
export function whyNoPause(s: StepperState): string | null {
  if (!s.live) return whyNoStep(s);
  return s.state === 'running' ? null : 'Nothing is running to pause.';
}

/** Stop (Shift+F5). */
export function whyNoStop(s: StepperState): string | null {
  if (s.branch === null) return 'No episode is open.';
  return s.live ? null : 'This episode is not running: there is nothing to stop.';
}

/** True when the step paused inside is held for the person (the card shows it). */
function holding(s: StepperState): boolean {
  return s.held !== null && s.state !== 'running' && s.state !== 'ended';
}

/** Why the viewed step cannot be branched from (rollback, fork), or null. */
function whyNoSnapshot(s: StepperState, what: string): string | null {
  const row = selectViewedRow(s);
  if (row === null) return 'Select a step first.';
  if (!row.snapshot && s.held?.step === row.step)
    return `Step ${row.step} has not run yet (it waits in the inspector): ${what} from step ${row.step - 1}, or run it first.`;
  if (!row.snapshot)
    return `Step ${row.step} never finished, so it has no snapshot: ${what} from step ${row.step - 1}.`;
  return null;
}

/**
 * What a live episode's Roll back and Fork do, in their one reason: greyed together, they are
 * said together in one line under them (replay-controls.tsx), not twice.
 */
const LIVE_BRANCHING = 'roll back or fork';

/** Roll back the sandbox to the viewed step. */
export function whyNoRollback(s: StepperState): string | null {
  if (!s.live) {
    const way = selectWayOn(s);
    return way.step === null
      ? 'Only a live episode has a sandbox to roll back: select a finished step and reopen it.'
      : `Only a live episode has a sandbox to roll back: “${way.reopen}” rebuilds step ${way.step} in a fresh one.`;
  }
  if (s.state === 'running') return 'The episode is running: pause it first.';
  return whyNoSnapshot(s, LIVE_BRANCHING);
}

/**
 * The step Fork and Reopen act at: the viewed one; for a branch not live whose viewed step
 * never finished, the step before it the way on names (a released episode's buttons were greyed
 * at step 2 beside the notice's "Reopen at step 1").
 */
export function selectBranchStep(s: StepperState): number | null {
  if (!s.live) return selectWayOn(s).step ?? selectViewedRow(s)?.step ?? null;
  return selectViewedRow(s)?.step ?? null;
}

/** Fork from the viewed step (a branch not live: from the step its way on names). */
export function whyNoFork(s: StepperState): string | null {
  if (s.live && s.state === 'running') return 'The episode is running: pause it first.';
  if (!s.live && selectWayOn(s).step !== null) return null;
  return whyNoSnapshot(s, s.live ? LIVE_BRANCHING : 'fork');
}

/** Reopen the recorded branch live at the viewed step (a live one is already live: roll back instead). */
export function whyNoReopen(s: StepperState): string | null {
  if (s.branch === null) return 'No episode is open.';
  if (s.live) return 'This episode is live already: roll its sandbox back, or fork, to go on from a step.';
  // A step that never finished (its sandbox released while it was held, a crash) has no
  // snapshot to reopen: Reopen acts at the step before it (selectBranchStep), as the release
  // notice does; only with no finished step at all is there nothing to reopen.
  if (selectWayOn(s).step !== null) return null;
  return whyNoSnapshot(s, 'reopen');
}

/**
 * The Replay panel's branch actions by the label the window gives them at a step, each with why
 * it cannot act now: the panel's buttons and a walkthrough that names one are read against it.
 */
export const REPLAY_ACTIONS = {
  rollback: { label: (_step: number) => 'Roll back sandbox to here', whyNot: whyNoRollback },
  reopen: { label: reopenLabel, whyNot: whyNoReopen },
  fork: { label: forkLabel, whyNot: whyNoFork },
} as const;

/**
 * The held step when its decided answer is a final one (no tool call): delivered, it ends the
 * episode, so no step after it reads anything injected now; null otherwise. The Inject box
 * offered "What the agent reads at step 4" beside a held step 3 that ended the episode.
 */
export function selectHeldEndsEpisode(s: StepperState): number | null {
  const held = s.held;
  if (!holding(s) || held === null) return null;
  return held.calls.length === 0 && held.final !== null ? held.step : null;
}

/** Inject a message into the live episode. */
export function whyNoInject(s: StepperState): string | null {
  if (!s.live) return whyNoStep(s);
  if (s.state === 'running') return 'The episode is running: pause it to inject at this step.';
  const ends = selectHeldEndsEpisode(s);
  if (ends !== null)
    return `Step ${ends} is the agent's final answer: it ends the episode, so no step after it reads a message. To go on, edit the answer in the paused-step card.`;
  if (holding(s))
    return `Step ${s.held?.step ?? ''} is paused inside: a message goes in between steps. Run it (F10) first, or change it in the paused-step card.`;
  return null;
}

/** Override the last tool result. */
export function whyNoOverride(s: StepperState): string | null {
  if (holding(s))
    return `Step ${s.held?.step ?? ''} is paused before its tools run: use “Replace result” in its card instead.`;
  const inject = whyNoInject(s);
  if (inject) return inject;
  if (selectLastStep(s) === 0) return 'No tool has run yet: take a step first.';
  return null;
}
