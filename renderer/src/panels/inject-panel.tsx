import { useEffect, useRef, useState } from 'react';
import { revealWhole } from '../layout/reveal-whole';
import { Panel, PanelState } from '../components/panel';
import { firstWhy, whyNot } from '../components/why-not';
import { useNeedsOtherAgent } from '../components/fork-other-button';
import { AGAIN_FAILS_SEE_REPLAY } from '../stores/stepper/way-on';
import { WhyLine, WhySlot } from '../components/why-lines';
import {
  NOT_OPENED,
  selectBranchStep,
  selectHeldEndsEpisode,
  whyNoFork,
  whyNoInject,
  whyNoOverride,
} from '../stores/stepper/why-not-now';
import {
  injectPlaceholder,
  selectInjectWhy,
  selectSection,
  type InjectSection,
} from '../stores/inject/inject-store';
import {
  selectCurrentRow,
  selectLastStep,
  selectOpening,
  selectViewedStep,
  selectWaitsForPerson,
  selectWayOn,
} from '../stores/stepper/stepper-store';
import { resultLine } from '../../../shared/step-summary';
import { overrideWords } from '../model/override-words';
import { selectBusyWhy, selectUnderWay } from '../stores/replay/replay-store';
import { useSlice, useStores } from '../stores/use-stores';
import { selectPersonDecides } from '../stores/stepper/agent-traits';

const SECTION_LABEL: Record<InjectSection, { readonly label: string; readonly title: string }> = {
  decide: { label: 'Decision', title: "the manual agent's next tool call or final answer" },
  message: { label: 'Message', title: 'add a user or system message the agent reads at its next step' },
  override: {
    label: 'Override result',
    title: "give the agent your result in place of what the last step's tool returned: it reads yours next",
  },
};

/** The panel's sections as tabs, on one line in its header: each is one click away, never below the fold. */
function SectionTabs(props: {
  readonly section: InjectSection;
  readonly manual: boolean;
  readonly onChoose: (section: InjectSection) => void;
}) {
  const sections: readonly InjectSection[] = props.manual
    ? ['decide', 'message', 'override']
    : ['message', 'override'];
  return (
    // The inspector's tab style: one line of tabs, the chosen one underlined.
    <nav className="tabs" role="tablist" aria-label="what to do">
      {sections.map((s) => (
        <button
          key={s}
          type="button"
          role="tab"
          aria-selected={props.section === s}
          className={props.section === s ? 'on' : ''}
          data-testid="inject-tab"
          data-section={s}
          {...(s === 'message' ? { 'aria-keyshortcuts': 'I', 'data-key-focus': 'inject-text' } : {})}
          title={SECTION_LABEL[s].title}
          onClick={() => props.onChoose(s)}
        >
          {SECTION_LABEL[s].label}
        </button>
      ))}
    </nav>
  );
}

/**
 * An ended branch's Inject panel: nothing can be sent to it, so one sentence and the way on
 * (a fork, in the words and at the step every panel names: way-on.ts). A component of its own:
 * it alone renders on a step change.
 */
function InjectEnded(props: { readonly branch: string }) {
  const stores = useStores();
  const { branch } = props;
  const what = useSlice('stepper', (s) => selectWayOn(s).what);
  const label = useSlice('stepper', (s) => selectWayOn(s).fork);
  // The recorded agent would fail again (way-on.ts): Replay says why and offers the fork.
  const other = useNeedsOtherAgent();
  const at = useSlice('stepper', selectBranchStep);
  // Not while the consent question waits for the person: nothing is forking until Allow.
  const forking = useSlice('replay', (s) => selectUnderWay(s) === 'fork');
  const busyWhy = useSlice('replay', selectBusyWhy);
  // The rule Replay's Fork follows: offered here and refused there, for a step an idle release
  // cut short, it was both.
  const noFork = useSlice('stepper', whyNoFork);
  const replayError = useSlice('replay', (s) => s.error);
  // A fork asked for here answers here (the replay controls say it too).
  const [forkAsked, setForkAsked] = useState(false);
  useEffect(() => setForkAsked(false), [branch]);
  return (
    <div data-testid="inject-ended">
      <PanelState kind="empty">
        {what}: nothing can be injected into it. {other ? AGAIN_FAILS_SEE_REPLAY : 'Fork it to inject there.'}
      </PanelState>
      {/* The recorded agent would fail again: Replay alone says why and offers the fork. */}
      {other ? null : at !== null ? (
        <button
          type="button"
          data-testid="inject-fork"
          {...whyNot(firstWhy(noFork, busyWhy), undefined, 'inject-fork-why')}
          onClick={() => {
            setForkAsked(true);
            void stores.replay.getState().fork(branch, at);
          }}
        >
          {forking ? 'Forking…' : label}
        </button>
      ) : null}
      <WhySlot id="inject-fork-why" />
      {forkAsked && replayError ? <PanelState kind="error">{replayError}</PanelState> : null}
    </div>
  );
}

/** Inject a system or user message at the paused step; override the pending tool result. */
export function InjectPanel() {
  const stores = useStores();
  const branch = useSlice('stepper', (s) => s.branch);
  const live = useSlice('stepper', (s) => s.live);
  const opening = useSlice('stepper', selectOpening);
  const failed = useSlice('stepper', (s) => s.load === 'error');
  const state = useSlice('stepper', (s) => s.state);
  const role = useSlice('inject', (s) => s.role);
  const mode = useSlice('inject', (s) => s.mode);
  const text = useSlice('inject', (s) => s.text);
  const overrideText = useSlice('inject', (s) => s.overrideText);
  const noInject = useSlice('stepper', whyNoInject);
  // After a rollback to k the agent reads the message after step k, not after the undone steps.
  const currentRow = useSlice('stepper', selectCurrentRow);
  // A message goes in after the latest step, whichever step is shown: said when an earlier one is.
  const viewingEarlier = useSlice('stepper', (s) => (selectViewedStep(s) ?? Infinity) < selectLastStep(s));
  // A held final answer ends the episode: the box says no step reads a message (not "step 4").
  const endsAt = useSlice('stepper', selectHeldEndsEpisode);
  const placeholder = injectPlaceholder(currentRow, mode, viewingEarlier, state === 'running', endsAt);
  const noOverride = useSlice('stepper', whyNoOverride);
  const sending = useSlice('inject', (s) => s.sending);
  // Why Inject cannot send, said under it once a message is typed.
  const injectWhy = selectInjectWhy({ text, sending }, noInject);
  const error = useSlice('inject', (s) => s.error);
  const notice = useSlice('inject', (s) => s.notice);
  // Only a live branch's override section reads it (the pending result): a recorded branch's
  // panel does not render again on every step change (issue 33.9).
  const detail = useSlice('inspector', (s) => (live ? s.detail : null));
  const lastStep = useSlice('stepper', selectLastStep);
  const manual = useSlice('stepper', (s) => s.live && selectPersonDecides(s));
  // The agent asks the person now (not while the step the person decided runs).
  const waits = useSlice('stepper', selectWaitsForPerson);
  const decideTool = useSlice('inject', (s) => s.decideTool);
  const decideArgs = useSlice('inject', (s) => s.decideArgs);
  const decideText = useSlice('inject', (s) => s.decideText);
  const tools = useSlice('stepper', (s) => s.view?.tools);
  // Checked before queuing: an unknown name would only come back as an error observation.
  const typed = decideTool.trim();
  const unknownTool =
    typed && tools && !tools.includes(typed)
      ? `This task has no tool “${typed}”. Its tools: ${tools.join(', ')}.`
      : null;
  const a = stores.inject.getState();
  const section = useSlice('inject', (s) => selectSection(s, manual));
  // The answer to an action shows under the button that did it (a new section clears it),
  // scrolled to whole when it comes: at 1024×700 an answer of two lines sat under the Sandbox
  // header, cut after its first (the Replay panel's answer, alike).
  const answerRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if ((error || notice) && answerRef.current) revealWhole(answerRef.current);
  }, [error, notice]);
  const answer =
    error || notice ? (
      <div ref={answerRef} data-testid="inject-answer">
        {error ? <PanelState kind="error">{error}</PanelState> : null}
        {notice ? (
          <div className="notice" data-testid="inject-notice">
            {notice}
          </div>
        ) : null}
      </div>
    ) : null;
  // The agent asks the person for its next decision: the form and its Send are brought whole
  // into the panel (at 1280×800 the Send button sat under the Sandbox header).
  const sendRef = useRef<HTMLButtonElement>(null);
  const asksRef = useRef<HTMLDivElement>(null);
  const asked = branch !== null && waits && section === 'decide';
  useEffect(() => {
    if (asked && sendRef.current) revealWhole(sendRef.current, asksRef.current);
  }, [asked]);
  const ready = branch !== null && live && state !== 'running';
  // The call whose result an override replaces: the last of the step the sandbox is at, read
  // from the inspector while it shows that step (another step's would be the wrong result).
  const pendingCall = detail && detail.step === lastStep ? (detail.calls.at(-1) ?? null) : null;
  // What the tool returned, and what the agent is about to see (a person's, once overridden).
  const toolResult = pendingCall?.result ?? null;
  const pending = pendingCall?.override?.shown ?? toolResult;
  const target = pendingCall ? { step: lastStep, tool: pendingCall.call.name } : null;
  const words = overrideWords(target);

  return (
    <Panel
      testId="inject-panel"
      title="Inject"
      className="inject"
      // In the header: the tabs cost the form no line of the few a 1024×700 window gives it.
      actions={
        branch && live ? <SectionTabs section={section} manual={manual} onChoose={a.setSection} /> : null
      }
    >
      {!branch ? <PanelState kind="empty">Open a live episode to inject observations.</PanelState> : null}
      {/* Nothing can be sent to an ended episode: one sentence and the way on, not a dead form. */}
      {branch && failed ? (
        <PanelState kind="empty">{`Nothing to inject into: ${NOT_OPENED}.`}</PanelState>
      ) : null}
      {branch && !live && !opening && !failed ? <InjectEnded branch={branch} /> : null}
      {branch && live ? (
        <>
          {/* Not on the decision tab: there the agent (a person deciding) waits for this very
              form, and "pause to inject" above "the agent is waiting for you" said both. */}
          {state === 'running' && section !== 'decide' ? (
            <PanelState kind="loading">Running — pause (or hit a breakpoint) to inject.</PanelState>
          ) : null}
          {section === 'decide' ? (
            <div role="tabpanel" data-testid="inject-section-decide">
              {waits ? (
                <div ref={asksRef} className="notice" data-testid="decide-asks" role="status">
                  The agent is waiting for you: enter the next tool call (or a final answer) and send it. To
                  stop waiting, press Pause (or Escape).
                </div>
              ) : null}
              <div className="row">
                <input
                  className="search"
                  style={{ width: 140 }}
                  aria-label="tool"
                  placeholder="tool (empty: final answer)"
                  value={decideTool}
                  data-testid="decide-tool"
                  list="decide-tools"
                  onChange={(e) => a.setDecision({ tool: e.target.value })}
                />
                <datalist id="decide-tools">
                  {(tools ?? []).map((t) => (
                    <option key={t} value={t} />
                  ))}
                </datalist>
              </div>
              {unknownTool ? (
                <div className="state state-error" role="alert" data-testid="decide-unknown-tool">
                  {unknownTool}
                </div>
              ) : null}
              <textarea
                rows={2}
                aria-label="arguments"
                data-testid="decide-args"
                placeholder='arguments as JSON, e.g. {"command": "ls"} (↑: the last decision sent)'
                value={decideArgs}
                onChange={(e) => a.setDecision({ args: e.target.value })}
                onKeyDown={(e) => {
                  // ↑ on the first line / ↓ on the last walks the decisions sent, as a shell's history.
                  const el = e.currentTarget;
                  const before = el.value.slice(0, el.selectionStart);
                  const after = el.value.slice(el.selectionEnd);
                  if (e.key === 'ArrowUp' && !before.includes('\n')) {
                    e.preventDefault();
                    a.recallDecision(-1);
                  } else if (e.key === 'ArrowDown' && !after.includes('\n')) {
                    e.preventDefault();
                    a.recallDecision(1);
                  }
                }}
              />
              <textarea
                rows={1}
                aria-label="assistant text"
                placeholder="assistant text (the final answer when no tool)"
                value={decideText}
                onChange={(e) => a.setDecision({ text: e.target.value })}
              />
              {/* Pinned at the pane's bottom edge: at 1280×800 Send sat half under the Sandbox header. */}
              <div className="row pinned-actions" data-pinned>
                <button
                  type="button"
                  ref={sendRef}
                  data-testid="decide-send"
                  // A decision is welcome while the agent waits (running) as well as queued ahead (paused).
                  {...whyNot(firstWhy(sending && 'Sending…', unknownTool), undefined, 'decide-send-why')}
                  onClick={() => void a.decide(branch)}
                >
                  {state === 'running' ? 'Send decision' : 'Queue decision'}
                </button>
              </div>
              <WhySlot id="decide-send-why" />
              {answer}
            </div>
          ) : null}
          {section === 'message' ? (
            <div role="tabpanel" data-testid="inject-section-message">
              <div className="row">
                <label>
                  role{' '}
                  <select
                    value={role}
                    onChange={(e) => a.setRole(e.target.value as 'system' | 'user')}
                    data-testid="inject-role"
                  >
                    <option value="user">user</option>
                    <option value="system">system</option>
                  </select>
                </label>
                <label>
                  <input
                    type="radio"
                    name="inject-mode"
                    checked={mode === 'text'}
                    onChange={() => a.setMode('text')}
                  />{' '}
                  text
                </label>
                <label>
                  <input
                    type="radio"
                    name="inject-mode"
                    checked={mode === 'json'}
                    onChange={() => a.setMode('json')}
                  />{' '}
                  JSON
                </label>
              </div>
              <textarea
                data-testid="inject-text"
                rows={3}
                placeholder={placeholder}
                value={text}
                onChange={(e) => a.setText(e.target.value)}
              />
              <div className="row pinned-actions" data-pinned>
                <button
                  type="button"
                  className="primary"
                  data-testid="inject-send"
                  {...whyNot(
                    injectWhy.why,
                    undefined,
                    injectWhy.shown ? 'inject-send-why' : 'inject-send-slot',
                  )}
                  onClick={() => void a.inject(branch)}
                >
                  {/* "at this step" beside an earlier step shown was not where it lands. */}
                  {sending
                    ? 'Injecting…'
                    : viewingEarlier
                      ? 'Inject after the latest step'
                      : 'Inject at this step'}
                </button>
              </div>
              <WhyLine id="inject-send-why" why={injectWhy.shown ? injectWhy.why : null} />
              <WhySlot id="inject-send-slot" />
              {answer}
            </div>
          ) : null}
          {section === 'override' ? (
            <div role="tabpanel" data-testid="inject-section-override">
              {/* The result replaced, in sight before it is: the inspector may show another tab or step. */}
              {pendingCall && pending ? (
                <p className="override-pending" data-testid="override-pending" title={resultLine(pending)}>
                  Agent sees next: {pendingCall.call.name} →{' '}
                  <code className="mono">{resultLine(pending)}</code>
                </p>
              ) : null}
              <textarea
                data-testid="override-text"
                rows={3}
                aria-label="the result the agent sees instead"
                placeholder='what the agent sees instead: plain text (as stdout) or a result {"ok": true, "stdout": "…"}'
                value={overrideText}
                onChange={(e) => a.setOverrideText(e.target.value)}
              />
              <div className="row pinned-actions" data-pinned>
                <button
                  type="button"
                  {...whyNot(
                    firstWhy(
                      noOverride,
                      !ready && 'The episode is not paused live.',
                      !pending &&
                        (detail && detail.step !== lastStep
                          ? `The result it replaces is step ${lastStep}'s: select that step in the timeline.`
                          : 'No result is waiting: pause before the tool runs first.'),
                    ),
                    words.copyTitle,
                    'override-why',
                  )}
                  data-testid="override-copy"
                  onClick={() => a.setOverrideText(JSON.stringify(pending, null, 2))}
                >
                  {words.copy}
                </button>
                <button
                  type="button"
                  className="primary"
                  data-testid="override-send"
                  {...whyNot(
                    firstWhy(
                      noOverride,
                      !overrideText.trim() && 'Write the result the agent sees first.',
                      sending && 'Sending…',
                    ),
                    undefined,
                    'override-why',
                  )}
                  onClick={() => void a.override(branch, toolResult, target)}
                >
                  Override
                </button>
              </div>
              <WhySlot id="override-why" />
              {answer}
            </div>
          ) : null}
        </>
      ) : null}
    </Panel>
  );
}
