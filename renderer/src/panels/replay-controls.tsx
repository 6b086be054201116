import { useEffect, useRef } from 'react';
import { ForkSettings } from '../components/fork-settings';
import { ReopenButton } from '../components/reopen-button';
import { ForkOtherButton, useNeedsOtherAgent } from '../components/fork-other-button';
import { ConsentAskView } from '../components/consent-ask';
import { ReplayReportView } from '../components/replay-report';
import { pinnedBottom, setSnapTail } from '../layout/snap-tail';
import { CandidatesButton, CandidatesNotes } from '../components/candidates-view';
import { CompareEntry } from '../components/compare-view';
import { Panel, PanelState } from '../components/panel';
import { ErrorText } from '../components/error-text';
import { firstWhy, whyNot } from '../components/why-not';
import { WhyLine, WhySlot } from '../components/why-lines';
import {
  REPLAY_ACTIONS,
  selectBranchStep,
  whyNoFork,
  whyNoRollback,
  whyNothingToScrub,
} from '../stores/stepper/why-not-now';
import { WhatIf } from '../components/what-if';
import {
  selectFirstStep,
  selectLastStep,
  selectOffersLatest,
  selectViewedStep,
  selectWayOn,
} from '../stores/stepper/stepper-store';
import { selectBusyWhy, selectSettingsError, selectUnderWay } from '../stores/replay/replay-store';
import { useSlice, useStores } from '../stores/use-stores';
import { revealWhole } from '../layout/reveal-whole';

/** The line under Roll back and Fork saying why they cannot act (both name it). */
const BRANCH_WHY_ID = 'replay-branch-why';

/** The line under Replay's actions saying, while one is pointed at or focused, why it cannot act (WhySlot). */
const ACTIONS_WHY_ID = 'replay-actions-why';

/** The line under Replay's header saying why a scrubber arrow cannot move (WhySlot). */
const SCRUB_WHY_ID = 'replay-scrub-why';

/** Scrub to any step; roll the sandbox back, fork, what-if, re-execute; open candidates and compare side by side. */
export function ReplayControls() {
  const stores = useStores();
  const branch = useSlice('stepper', (s) => s.branch);
  const live = useSlice('stepper', (s) => s.live);
  const first = useSlice('stepper', selectFirstStep);
  const last = useSlice('stepper', selectLastStep);
  const viewed = useSlice('stepper', selectViewedStep);
  const offersLatest = useSlice('stepper', selectOffersLatest);
  // The operation under way (none while the consent question waits) and why the buttons wait.
  const running = useSlice('replay', selectUnderWay);
  const busyWhy = useSlice('replay', selectBusyWhy);
  // Said in the fork settings dialog while it is open (its own Fork's answer): not again in the
  // pane behind it (a failed fork's "did not start" was read twice, in the dialog and behind it).
  const error = useSlice('replay', (s) =>
    s.settingsOpen && selectSettingsError(s) !== null ? null : s.error,
  );
  const anyError = useSlice('replay', (s) => s.error);
  const notice = useSlice('replay', (s) => s.notice);
  const report = useSlice('replay', (s) => s.report);
  const consentAsk = useSlice('replay', (s) => s.consentAsk);
  const agent = useSlice('replay', (s) => s.agent);
  const model = useSlice('replay', (s) => s.model);
  const noRollback = useSlice('stepper', whyNoRollback);
  const noFork = useSlice('stepper', whyNoFork);
  const nothing = useSlice('stepper', whyNothingToScrub);
  // Where Fork and Reopen act: the viewed step, or (a branch not live, viewed at a step that never
  // finished) the step before it, named on the buttons.
  const branchStep = useSlice('stepper', selectBranchStep);
  // The fork settings dialog (in the slice: Inject and Sandbox open it too); an error that names
  // its "Agent" field opens it.
  const settings = useSlice('replay', (s) => s.settingsOpen);
  const setSettings = stores.replay.getState().showSettings;
  const namesAgent = anyError?.includes('“Agent”') ?? false;
  useEffect(() => {
    if (namesAgent) setSettings(true);
  }, [namesAgent, setSettings]);
  // The recorded agent would fail again (way-on.ts): Fork and Reopen give way to one button.
  const other = useNeedsOtherAgent();
  const againFails = useSlice('stepper', (s) => selectWayOn(s).againFails);
  // A live episode at rest whose Roll back and Fork cannot act (its viewed step waits in the
  // inspector, or never finished): their one reason in a line under them, on screen without a
  // focus or a pointer (issue 33). Said only in the bubble, a person with a mouse saw nothing,
  // and the bubble covered Try candidates and Inject's field. Not while running: that reason
  // comes and goes with each step, and the bar says "running".
  const atRest = useSlice('stepper', (s) => s.live && s.state !== 'running');
  const branchWhy = atRest ? firstWhy(noRollback, noFork) : null;
  // The answer to a button shows under the buttons; in a short window Replay scrolls (the
  // terminal keeps its room), so an answer is scrolled to when it comes, error or notice alike:
  // at 1024×700 the notice sat below the pane's edge, cut in half. Again once the steps are
  // drawn: a rollback or fork answers while the window opens the new branch (no steps yet, so
  // the panel says it has nothing to scrub and the answer is not in it). Whole, and with no
  // sliver of a button row above it (revealWhole).
  const answer = useRef<HTMLDivElement>(null);
  // The pinned buttons' height, for the body's scroll padding (styles.css): a row brought into
  // view with scrollIntoView lands below them, not under them.
  const actions = useRef<HTMLDivElement>(null);
  const drawn = branch !== null && last > 0;
  // Again once the buttons are drawn: the pane opens with nothing to scrub (no row to measure),
  // and run once at mount the padding was never set, so a report scrolled to sat under them.
  // With a report, the space after it lets its end rest on a whole line too (snap-tail.ts).
  useEffect(() => {
    const row = actions.current;
    const body = row?.parentElement;
    if (!row || !body || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      body.style.setProperty('--pinned-h', `${pinnedBottom(body, row)}px`);
      setSnapTail(body, row);
    });
    observer.observe(row);
    observer.observe(body);
    for (const child of Array.from(body.children)) observer.observe(child);
    return () => observer.disconnect();
  }, [drawn, report]);
  useEffect(() => {
    if ((error || notice) && drawn && answer.current) revealWhole(answer.current);
  }, [error, notice, drawn]);
  // A question (allow a looser sandbox?) comes above the buttons and pushes them down: read
  // whole with no sliver of the button row under it at the pane's edge (consent-ask-1024x700
  // showed "Roll back sandbox to here" cut by the terminal's header).
  const question = useRef<HTMLDivElement>(null);
  const asked = consentAsk !== null;
  useEffect(() => {
    if (asked && question.current) revealWhole(question.current);
  }, [asked]);
  const stepper = stores.stepper.getState();
  const replay = stores.replay.getState();

  if (!branch || last === 0)
    return (
      <Panel testId="replay-controls" title="Replay" className="replay">
        <PanelState kind="empty">{nothing}</PanelState>
        {/* Ended at setup because its agent cannot go on: the way on the other panes offer too. */}
        {branch && other && !live ? <ForkOtherButton testId="replay-fork-other" /> : null}
        {branch && settings && !live ? (
          <ForkSettings
            branch={branch}
            step={branchStep ?? 0}
            live={live}
            noFork={noFork}
            onClose={() => setSettings(false)}
          />
        ) : null}
      </Panel>
    );
  const step = viewed ?? last;
  const at = branchStep ?? step;
  // The scrubber sits in the panel's header: at 1024×700 the pane is short (the terminal keeps
  // its 180 px), and a row of its own pushed the answer to a button below the pane's edge.
  const scrub = (
    <div className="row scrub">
      <button
        type="button"
        aria-label="previous step"
        onClick={stepper.selectPrevious}
        {...whyNot(step <= first && `already at the first step (${first})`, undefined, SCRUB_WHY_ID)}
      >
        ←
      </button>
      <input
        type="range"
        min={first}
        max={last}
        value={step}
        aria-label="scrub to step"
        data-testid="scrubber"
        onChange={(e) => stepper.select(Number(e.target.value))}
      />
      <button
        type="button"
        aria-label="next step"
        onClick={stepper.selectNext}
        {...whyNot(step >= last && `already at the last step (${last})`, undefined, SCRUB_WHY_ID)}
      >
        →
      </button>
      <span className="mono" data-testid="scrub-label">
        step {step} / {last}
      </span>
      {offersLatest ? (
        <button type="button" onClick={() => stepper.select(null)} title="follow the latest step">
          latest
        </button>
      ) : null}
    </div>
  );
  return (
    <Panel testId="replay-controls" title="Replay" className="replay" actions={scrub}>
      {/* The scrubber's arrows say why here, under the header they sit in (a line has no room there). */}
      <WhySlot id={SCRUB_WHY_ID} />
      {consentAsk ? (
        <div ref={question}>
          <ConsentAskView
            message={consentAsk.message}
            action={
              consentAsk.op === 'replay' ? 're-execute' : consentAsk.op === 'whatif' ? 'run' : consentAsk.op
            }
            onAllow={replay.allowConsent}
            onDeny={replay.denyConsent}
          />
        </div>
      ) : null}
      {/* Every action of the panel in one row under the scrubber (wrapping): on screen without
          scrolling at 1024×700; what the buttons answer and open goes below them. */}
      {/* Pinned at the pane's top (data-pinned, reveal-whole.ts): what they open and answer scrolls
          under them, and they stay in reach (they scrolled out once "What if…" was open). */}
      <div className="row replay-actions" data-testid="replay-actions" data-pinned ref={actions}>
        <button
          type="button"
          data-testid="rollback"
          aria-keyshortcuts="B"
          {...whyNot(
            firstWhy(noRollback, busyWhy),
            'restore workspace, memory, conversation and shell to just after this step (B)',
            branchWhy ? BRANCH_WHY_ID : ACTIONS_WHY_ID,
          )}
          onClick={() => void replay.rollback(branch, step)}
        >
          {running === 'rollback' ? 'Rolling back…' : REPLAY_ACTIONS.rollback.label(step)}
        </button>
        {!live && !other ? <ReopenButton branch={branch} testId="reopen" whyIn={ACTIONS_WHY_ID} /> : null}
        {other ? (
          <ForkOtherButton testId="fork-other" />
        ) : (
          <button
            type="button"
            data-testid="fork"
            aria-keyshortcuts="F"
            {...whyNot(
              firstWhy(noFork, busyWhy),
              'continue from this step as a new branch, with its own id and sandbox (F)',
              branchWhy ? BRANCH_WHY_ID : ACTIONS_WHY_ID,
            )}
            onClick={() => void replay.fork(branch, at)}
          >
            {running === 'fork' ? 'Forking…' : REPLAY_ACTIONS.fork.label(at)}
          </button>
        )}
        {/* Beside Fork, in the row that is always on screen: what Fork and Reopen go on with. */}
        <button
          type="button"
          data-testid="fork-settings-open"
          title={`Agent for Fork and Reopen: ${agent.trim() || 'as recorded'}${model.trim() ? ` · model ${model.trim()}` : ''}`}
          onClick={() => setSettings(true)}
        >
          Fork settings…{agent.trim() ? ' ✎' : ''}
        </button>
        <button
          type="button"
          data-testid="replay-verify"
          {...whyNot(busyWhy, undefined, ACTIONS_WHY_ID)}
          onClick={() => void replay.replay(branch)}
        >
          {running === 'replay' ? 'Re-executing…' : 'Re-execute replay'}
        </button>
        {/* Candidates and compare open in a view of their own (components/side-by-side-view). */}
        <CandidatesButton branch={branch} step={step} whyIn={ACTIONS_WHY_ID} />
        <CompareEntry branch={branch} />
      </div>
      <WhyLine id={BRANCH_WHY_ID} why={branchWhy} />
      <WhySlot id={ACTIONS_WHY_ID} />
      {/* The recorded agent would fail again: why, here alone (Inject and Sandbox point here). */}
      {other && !live && againFails ? (
        <p className="why-line" data-testid="replay-again-fails">
          {againFails}
        </p>
      ) : null}
      <CandidatesNotes branch={branch} />
      {/* The answer to a button above shows under it, not below the open sections. */}
      <div ref={answer}>
        {error ? (
          <PanelState kind="error">
            <ErrorText text={error} />
          </PanelState>
        ) : null}
        {notice ? (
          <div className="notice replay-answer" data-testid="replay-notice">
            <span>{notice}</span>
            <button
              type="button"
              className="notice-close"
              data-testid="replay-notice-dismiss"
              aria-label={`dismiss: ${notice}`}
              title="Dismiss this message"
              onClick={replay.dismissNotice}
            >
              ×
            </button>
          </div>
        ) : null}
      </div>
      {/* Fork and Reopen go on with the recorded agent unless "Agent" names another, set in a
          dialog of its own (an error that asks for an agent opens it, beside its fields). */}
      {settings ? (
        <ForkSettings
          branch={branch}
          step={at}
          live={live}
          noFork={noFork}
          onClose={() => setSettings(false)}
        />
      ) : null}
      {report ? <ReplayReportView report={report} /> : null}
      <WhatIf branch={branch} step={step} />
    </Panel>
  );
}
