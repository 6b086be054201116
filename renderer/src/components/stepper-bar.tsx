import { flaggedSuccess as isFlaggedSuccess, FLAGGED_MARK, FLAGGED_TITLE } from '../../../shared/end-words';
import { agentWords } from '../../../shared/agent-kind';
import { useEffect, useRef, type CSSProperties } from 'react';
import { IdText } from './id-text';
import {
  selectOpening,
  selectRecordedStatus,
  selectStateText,
  selectWaitsForPerson,
  selectWorkingText,
} from '../stores/stepper/stepper-store';
import { whyNoPause, whyNoStep, whyNoStop } from '../stores/stepper/why-not-now';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { useSlice, useStores } from '../stores/use-stores';

/**
 * When a pause switch set with nothing live on screen acts: the session keeps the switches and
 * gives them to the next live branch. (On a recorded episode they were disabled, and a new
 * user lost half a minute finding how to set them before starting a task.)
 */
const NEXT_EPISODE = 'from the first step of the next episode you start, reopen or fork';

/** The bar's reason line (WhySlot) for Step, Continue, Pause and Stop. */
const STEPPER_WHY_ID = 'stepper-why';

/**
 * The debugger toolbar: step, continue, pause, stop, and where the branch is. Why it
 * stopped, how it ended and what it refused are said in full above the inspector (`StopNotice`).
 */
export function StepperBar(props: { readonly onKeys: () => void }) {
  const stores = useStores();
  const stepButton = useRef<HTMLButtonElement>(null);
  // A live branch just opened (a start, a fork, a case) takes the focus to Step once Step can
  // act, if the focus fell to the page (the card a person pressed Enter on was disabled while
  // it started, and the next Tab began at the top of the library).
  const handOff = useRef<string | null>(null);
  const branch = useSlice('stepper', (s) => s.branch);
  const view = useSlice('stepper', (s) => s.view);
  const state = useSlice('stepper', (s) => s.state);
  const live = useSlice('stepper', (s) => s.live);
  const opening = useSlice('stepper', selectOpening);
  const busy = useSlice('stepper', (s) => s.busy);
  const working = useSlice('stepper', selectWorkingText);
  const noStep = useSlice('stepper', whyNoStep);
  const noPause = useSlice('stepper', whyNoPause);
  const noStop = useSlice('stepper', whyNoStop);
  // Set with nothing live, a switch acts on the next live episode: said where it is set.
  const later = live ? '' : `, ${NEXT_EPISODE}`;
  const stopPoints = useSlice('stepper', (s) => s.stopPoints);
  // A success QA flags (reward hacking) must not read as a plain green "succeeded" (issue 33, item 12).
  const flaggedSuccess = useSlice(
    'stepper',
    (s) => !s.live && isFlaggedSuccess(selectRecordedStatus(s), s.flags),
  );
  // A live branch waiting before its first step here (a start, a fork, a reopen) reads "paused at step K".
  const shownState = useSlice('stepper', selectStateText);
  const recordedStatus = useSlice('stepper', selectRecordedStatus);
  // Waiting for the person reads as asking for them (amber), not as the agent working (blue).
  const waitsForPerson = useSlice('stepper', selectWaitsForPerson);
  useEffect(() => {
    if (branch !== null && live) handOff.current = branch;
  }, [branch, live]);
  useEffect(() => {
    if (handOff.current === null || handOff.current !== branch || noStep !== null) return;
    handOff.current = null;
    // The card a person pressed Enter on keeps the focus while it starts (it says why it waits,
    // aria-disabled): the focus moves on from there too.
    const at = document.activeElement;
    if (at === document.body || at?.closest('.lib-item, [data-testid="project-start"]'))
      stepButton.current?.focus();
  }, [branch, noStep]);
  const a = stores.stepper.getState();
  return (
    <div className="stepper-bar" data-testid="stepper-bar" data-state={state ?? 'none'} data-busy={busy}>
      <span className="brand">stepbox</span>
      <button
        ref={stepButton}
        type="button"
        data-testid="btn-step"
        {...whyNot(noStep, 'Step (F10)', STEPPER_WHY_ID)}
        onClick={() => void a.step()}
      >
        ⤼ Step <kbd>F10</kbd>
      </button>
      <button
        type="button"
        data-testid="btn-continue"
        {...whyNot(noStep, 'Continue (F5)', STEPPER_WHY_ID)}
        onClick={() => void a.run()}
      >
        ▶ Continue <kbd>F5</kbd>
      </button>
      <button
        type="button"
        data-testid="btn-pause"
        {...whyNot(noPause, 'Pause after this step', STEPPER_WHY_ID)}
        onClick={() => void a.pause()}
      >
        ❚❚ Pause
      </button>
      <button
        type="button"
        data-testid="btn-stop"
        {...whyNot(noStop, 'Stop (Shift+F5)', STEPPER_WHY_ID)}
        onClick={() => void a.stop()}
      >
        ■ Stop <kbd>⇧F5</kbd>
      </button>
      <label
        className="toggle"
        title={`Show each decided action and let you run it, edit it or give its result (P)${later}`}
      >
        <input
          type="checkbox"
          data-testid="stop-before-tool"
          aria-keyshortcuts="P"
          aria-description={later ? NEXT_EPISODE : undefined}
          checked={stopPoints.before_tool}
          onChange={(e) => void a.setStopPoint('before_tool', e.target.checked)}
        />
        <span className="long">Pause before each tool runs</span>
        <span className="short">Pause before tools</span>
        <span className="tiny">❚❚ before tools</span>
      </label>
      <label
        className="toggle"
        title={`Show the model's answer before the agent gets it, and let you edit it${later}`}
      >
        <input
          type="checkbox"
          data-testid="stop-before-answer"
          aria-description={later ? NEXT_EPISODE : undefined}
          checked={stopPoints.before_answer}
          onChange={(e) => void a.setStopPoint('before_answer', e.target.checked)}
        />
        <span className="long">Pause before each answer</span>
        <span className="short">Pause before answers</span>
        <span className="tiny">❚❚ before answers</span>
      </label>
      <button
        type="button"
        data-testid="btn-keys"
        onClick={props.onKeys}
        title="Every key of the window (?)"
        // Its visible words first (speech input: "click Keys"), then what it opens.
        aria-label="Keys ? — every key of the window"
        aria-keyshortcuts="?"
      >
        <span className="keys-word">Keys </span>
        <kbd className="keep">?</kbd>
      </button>
      <span className="sep" />
      {/* Where the bar says where the branch is: a pointed or focused button's reason takes that
          room while it is said (the bar has no line to spare; a bubble under it lay over the
          panes' headers and their buttons). */}
      <WhySlot id={STEPPER_WHY_ID} />
      {branch ? (
        <span className="where">
          <span
            className="mono where-task"
            // The agent that ran it, with its recipe's version, as show and share say it.
            title={
              view
                ? `${view.summary.task} · agent ${agentWords(view.summary.agent, view.summary.agent_version)}`
                : ''
            }
            // Its length in its mono characters: a shorter name's floor (see .where-task).
            style={{ '--task-chars': (view?.summary.task ?? '').length } as CSSProperties}
          >
            {view?.summary.task ?? ''}
          </span>{' '}
          {/* No task before the id when the branch could not be read: no dot leading the line. */}
          {view ? '· ' : ''}
          <IdText id={branch} copy testId="episode-id" /> ·{' '}
          <span
            className={`badge st-${opening ? 'idle' : live ? (state === 'running' ? (waitsForPerson ? 'waiting' : 'running') : state === 'ended' ? 'ended' : 'paused') : flaggedSuccess ? 'flagged' : recordedStatus === 'recorded' ? 'open' : recordedStatus}`}
            data-testid="episode-state"
            title={flaggedSuccess ? FLAGGED_TITLE : undefined}
          >
            {opening ? 'opening…' : live ? shownState : recordedStatus}
            {flaggedSuccess && !opening ? FLAGGED_MARK : ''}
          </span>
          {working ? (
            <span className="muted" data-testid="episode-working">
              {' '}
              {working}
            </span>
          ) : null}
        </span>
      ) : (
        <span className="muted">no episode open</span>
      )}
    </div>
  );
}
