import { ruleLabel, ruleTitle } from '../../../shared/qa/rule-label';
import { memo, useMemo, useState } from 'react';
import { agentWords, runsOwnProgramKind } from '../../../shared/agent-kind';
import type { CallDetail, FileChange, StepDetail } from '../../../shared/contract/models';
import { assertNever } from '../../../shared/assert-never';
import { otherWritersText } from '../../../shared/other-writers-text';
import type { ToolResult } from '../../../shared/tool-result';
import { measuredDuration } from '../../../shared/tool-duration';
import { execWrapperOf, execWrapperText, exitCodeOf } from '../../../shared/exec-wrapper';
import { JsonText } from '../components/json-text';
import { FileDiffView, FileWholeView, pretty } from '../components/lazy-editors';
import { fileViewOf } from '../model/file-view';
import { rawResultNote } from '../model/raw-result-note';
import { cutNotice } from '../model/cut-notice';
import { resultView } from '../model/result-view';
import { rewardColours } from '../model/reward-colour';
import { PERSON_MARKS } from '../model/row-marks';
import { rewardLabel, rewardTitle } from '../../../shared/reward-label';
import { HeldActionCard } from '../components/held-action';
import { StopNotice } from '../components/stop-notice';
import { TaskView } from '../components/task-view';
import { Panel, PanelState } from '../components/panel';
import {
  agentOutputCaption,
  recordedStepOutput,
  type StepOutput,
} from '../stores/agent-output/agent-output-store';
import {
  INSPECTOR_TABS,
  selectInspectorEmpty,
  noCallText,
  selectNeverRan,
  selectShownTab,
} from '../stores/inspector/inspector-store';
import { selectLastStep } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';
import { formatBytes } from '../../../shared/format-bytes';
import { formatDuration, NOT_RUN, NOT_TIMED } from '../../../shared/format-duration';
import { refusalText, resultLine } from '../../../shared/step-summary';
import { decidedText } from '../model/edit-words';

/** Why a given result has no outcome or exit of a run. */
const GIVEN = 'a person gave this result: the tool did not run, so no command exited';

function Facts(props: {
  readonly result: ToolResult | null;
  readonly fallback?: boolean;
  /** How long the tool took ({@link measuredDuration}): null when not known or when it did not run. */
  readonly duration: number | null;
  /** A person gave this result: the tool did not run (why the duration is `—`). */
  readonly given: boolean;
}) {
  const r = props.result;
  // No state word here: the timeline's row says it (running, or waiting while held), and
  // "pending" beside the row's "running" and the header's "waiting" was a third word for one state.
  if (!r)
    return (
      <div className="facts muted" data-testid="inspector-no-result">
        no result yet
      </div>
    );
  const wrapper = props.given ? null : execWrapperOf(r);
  // The exit its header says for an agent's own tool: "ok" beside the exit row's "2" was untrue.
  const exit = exitCodeOf(r);
  return (
    <dl className="facts" data-testid="inspector-facts">
      {/* What happened, in words and colour: "ok true" beside "exit 1" read as success. */}
      <dt>outcome</dt>
      {/* A result a person gave is no run: "ok (exit 0)" beside it read as a command that ran. */}
      {props.given ? (
        <dd data-testid="inspector-outcome" title={GIVEN}>
          given by you — the agent reads it as this call’s result
        </dd>
      ) : (
        <dd
          className={!r.ok ? 'bad' : exit ? 'warn' : 'good'}
          data-testid="inspector-outcome"
          title={
            r.ok
              ? 'the tool ran (ok: true); the exit code is the command’s'
              : 'the tool could not run (ok: false)'
          }
        >
          {!r.ok
            ? `error: ${r.error?.code ?? 'unknown'}`
            : exit
              ? `exit ${exit} — the command failed`
              : exit === 0
                ? 'ok (exit 0)'
                : 'ok'}
          {props.fallback ? ' → the agent was shown a fallback' : ''}
        </dd>
      )}
      <dt>exit</dt>
      {/* An agent inside the sandbox ran the call and sent stepbox only its text: any exit status
        is in that text ("Process exited with code 0"), not a field; a bare "—" beside it read as
        a contradiction. */}
      {props.given ? (
        <dd data-testid="inspector-exit" title={GIVEN}>
          — <span className="muted">(no command ran)</span>
        </dd>
      ) : wrapper && (wrapper.exitCode !== null || wrapper.sessionId !== null) ? (
        <dd data-testid="inspector-exit" title={FROM_WRAPPER}>
          {wrapper.exitCode ?? '—'}{' '}
          <span className="muted">
            {wrapper.exitCode !== null
              ? '(in the header of the agent’s tool output)'
              : `(still running in the agent’s session ${wrapper.sessionId})`}
          </span>
        </dd>
      ) : r.exit_code === undefined && r.ok && props.duration === null ? (
        <dd data-testid="inspector-exit" title={NOT_REPORTED}>
          — <span className="muted">(not reported apart: the agent ran it; see its output)</span>
        </dd>
      ) : (
        <dd data-testid="inspector-exit">{r.exit_code ?? '—'}</dd>
      )}
      {/* No error: said "—" in full, left out where the facts flow on a few lines (styles.css). */}
      <dt className={r.error ? undefined : 'fact-none'}>error</dt>
      <dd className={r.error ? 'bad' : 'fact-none'} data-testid="inspector-error-code">
        {r.error ? r.error.code : '—'}
      </dd>
      <dt>duration</dt>
      <dd
        data-testid="inspector-duration"
        title={props.duration !== null ? undefined : props.given ? NOT_RUN : NOT_TIMED}
      >
        <span className="quantity">{formatDuration(props.duration)}</span>
        {props.duration === null && props.given ? (
          <span className="muted"> (the tool did not run)</span>
        ) : null}
      </dd>
      <dt>bytes</dt>
      <dd>
        <span className="quantity">{formatBytes(r.bytes)}</span>
      </dd>
      {r.truncated && (r.truncated.stdout || r.truncated.stderr) ? (
        <>
          <dt>truncated</dt>
          <dd className="bad">
            {[r.truncated.stdout ? 'stdout' : '', r.truncated.stderr ? 'stderr' : ''].join(' ')}
          </dd>
        </>
      ) : null}
      {r.fallback ? (
        <>
          <dt>fallback</dt>
          <dd className="bad">yes</dd>
        </>
      ) : null}
    </dl>
  );
}

/** Why an exit reads `—` for a call an agent inside the sandbox ran. */
const NOT_REPORTED =
  'the agent inside the sandbox ran this call and sent stepbox only its output text: an exit status, if any, is in that text';

/** Why an exit is read from the output's header. */
const FROM_WRAPPER =
  'the agent inside the sandbox ran this call; its tool wrote the exit status in the header above the output (a line the program printed below it does not count)';

/** A result's outcome in words: `exit 137`, `error timeout`. */
function outcome(r: ToolResult): string {
  if (!r.ok)
    return `error ${r.error?.code ?? 'unknown'}${r.exit_code === undefined ? '' : `, exit ${r.exit_code}`}`;
  return r.exit_code === undefined ? 'ok' : `exit ${r.exit_code}`;
}

function RawNote(props: { readonly result: unknown }) {
  const note = rawResultNote(props.result);
  return note ? (
    <p className="muted raw-note" data-testid="inspector-raw-note">
      {note}
    </p>
  ) : null;
}

// The views of a step's detail are memoized on it: a slider move re-renders the inspector for
// its new step's "loading…" while the detail shown stays the one before, and its colouring and
// nodes were made again each time (issue 33.9).
const CallView = memo(function CallView(props: { readonly call: CallDetail; readonly scope: string }) {
  const { call, result, override } = props.call;
  // What the tool really returned when the agent saw something else: a person's override,
  // or the fallback a hard timeout showed.
  const real = override?.real ?? props.call.real ?? null;
  const shown = override?.shown ?? result;
  const why = override ? 'overridden by a person' : 'fallback after the step timed out';
  return (
    <div className="call">
      <div className="call-title">
        {/* The call's id (the model's or the harness's) is for a tooltip: it read "call_2" beside the name. */}
        <b data-testid="inspector-call-name" title={`tool call id ${call.id}`}>
          {call.name}
        </b>
        {override ? <i className="mark mark-ovr">overridden</i> : null}
        {!override && real ? <i className="mark mark-ovr">fallback</i> : null}
        {props.call.replaced ? (
          <i className="mark mark-ovr" data-testid="inspector-replaced" title="the tool did not run">
            result given by you — the tool did not run
          </i>
        ) : null}
      </div>
      {real && shown ? (
        <div className="real-vs-shown" data-testid="inspector-real-vs-shown">
          <span>
            <b>real result</b> {outcome(real)}
          </span>
          <span>
            <b>the agent saw</b> {outcome(shown)} ({why})
          </span>
        </div>
      ) : null}
      <Facts
        result={real ?? result}
        fallback={!override && real !== null}
        duration={result ? measuredDuration(result, real, props.call.replaced === true) : null}
        given={props.call.replaced === true}
      />
      <div className="split">
        <div>
          <h4>arguments</h4>
          <JsonText
            model="arguments.json"
            scope={props.scope}
            value={pretty(call.arguments)}
            label="arguments"
          />
        </div>
        {/* Only once there is one: a result editor holding a literal `null` beside "no result
            yet" is what the call's result is not. */}
        {shown ? (
          <div>
            <ResultText
              heading={real ? 'result the agent saw' : 'result'}
              result={shown}
              model="result.json"
              scope={props.scope}
              label="result"
            />
          </div>
        ) : null}
      </div>
      {real ? (
        <ResultText
          heading="real result (replay uses this)"
          result={real}
          model="result-real.json"
          scope={props.scope}
          label="real result"
        />
      ) : null}
    </div>
  );
});

/**
 * A stream's text (stdout, stderr) as printed; one way for an empty one, "(empty)" muted: it was
 * an empty 8 px box on the Output tab and "nothing" under the agent's own output.
 */
function StreamText(props: { readonly text: string; readonly testId: string; readonly err?: boolean }) {
  return props.text ? (
    <pre className={props.err ? 'out err' : 'out'} data-testid={props.testId}>
      {props.text}
    </pre>
  ) : (
    <p className="muted stream-empty" data-testid={`${props.testId}-empty`}>
      (empty)
    </p>
  );
}

/** A tool result under its heading: the note on its raw form, then its JSON in an editor. */
function ResultText(props: {
  readonly heading: string;
  readonly result: ToolResult;
  readonly model: string;
  readonly scope: string;
  readonly label: string;
}) {
  return (
    <>
      <h4>{props.heading}</h4>
      <RawNote result={props.result} />
      <JsonText
        model={props.model}
        scope={props.scope}
        value={pretty(resultView(props.result))}
        label={props.label}
      />
    </>
  );
}

const OutputView = memo(function OutputView(props: { readonly detail: StepDetail }) {
  const calls = props.detail.calls;
  // The Call tab's words: the two tabs said "This step ran no tool." and "No tool call in step 8.".
  if (calls.length === 0) return <PanelState kind="empty">{noCallText(props.detail).tab}</PanelState>;
  return (
    <>
      {calls.map((c) => {
        const r = c.override?.real ?? c.result;
        const wrapper = c.replaced ? null : execWrapperOf(r);
        return (
          <div key={c.call.id} className="output">
            <h4>
              {c.call.name} — {wrapper ? 'output' : 'stdout'} {r?.truncated?.stdout ? '(truncated)' : ''}
            </h4>
            {wrapper ? (
              // The agent's tool wrote its own header above the output (Codex's "Chunk ID", "Wall
              // time", "Process exited with code"): said as facts, the output shown alone.
              <p
                className={wrapper.exitCode ? 'exec-facts warn' : 'exec-facts'}
                data-testid="inspector-exec-facts"
                title={FROM_WRAPPER}
              >
                {execWrapperText(wrapper)}
              </p>
            ) : null}
            <StreamText text={wrapper ? wrapper.output : (r?.stdout ?? '')} testId="inspector-stdout" />
            {wrapper ? (
              <details className="exec-raw" data-testid="inspector-stdout-raw">
                <summary>the text as recorded (what the model read)</summary>
                <pre className="out">{r?.stdout}</pre>
              </details>
            ) : null}
            <h4>stderr {r?.truncated?.stderr ? '(truncated)' : ''}</h4>
            <StreamText text={r?.stderr ?? ''} testId="inspector-stderr" err />
            {r?.error ? (
              <div className="bad">
                {r.error.code}: {r.error.message}
              </div>
            ) : null}
          </div>
        );
      })}
    </>
  );
});

/**
 * Says which of the step's texts came cut (head and tail; a 10 MB output put whole on the page
 * froze the window) and the command that prints them whole; nothing when none was.
 */
function CutNotice(props: { readonly detail: StepDetail; readonly branch: string }) {
  const notice = cutNotice(props.detail, props.branch);
  if (!notice) return null;
  // One line in a short pane (the tabs stay in view), the exact counts and the command one click away.
  return (
    <details className="caution-line cut-notice" data-testid="inspector-cut-notice">
      <summary data-testid="inspector-cut-summary">{notice.summary}</summary>
      <ul>
        {notice.lines.map((l) => (
          <li key={l.what}>
            <b>{l.what}</b> {l.text}
          </li>
        ))}
      </ul>
      <p>
        The trace keeps it whole; <code data-testid="inspector-cut-command">{notice.command}</code> prints
        every step&apos;s whole output (step {props.detail.step}&apos;s under its <code>results</code>).
      </p>
    </details>
  );
}

function StreamView(props: {
  readonly label: string;
  readonly text: string;
  readonly cut: boolean;
  readonly bytes: number | null;
  readonly err?: boolean;
}) {
  const kept =
    props.bytes !== null && props.cut
      ? ` — kept the first ${formatBytes(new TextEncoder().encode(props.text).length)} of ${formatBytes(props.bytes)}`
      : props.cut
        ? " — cut at the step's limit"
        : '';
  return (
    <>
      <h4>
        {props.label}
        {kept}
      </h4>
      <StreamText text={props.text} testId={`agent-${props.label}`} err={props.err} />
    </>
  );
}

/** What the agent's own program printed while a step ran: recorded, or arriving live. */
function AgentOutputView(props: {
  readonly output: StepOutput | null;
  readonly step: number;
  readonly running: boolean;
}) {
  const o = props.output;
  const agent = useSlice('stepper', (s) =>
    s.view?.summary.agent_version ? agentWords(s.view.summary.agent, s.view.summary.agent_version) : null,
  );
  return (
    <div className="agent-output" data-testid="agent-output" data-step={props.step}>
      <p className="muted" data-testid="agent-output-span">
        {agentOutputCaption(props.step, props.running, agent)}
      </p>
      {!hasOutput(o) || o === null ? (
        <PanelState kind="empty">
          The agent program printed nothing {props.running ? 'yet' : 'in this step'}.
        </PanelState>
      ) : (
        <>
          <StreamView
            label="stdout"
            text={o.stdout}
            cut={o.truncated.stdout}
            bytes={o.bytes?.stdout ?? null}
          />
          <StreamView
            label="stderr"
            text={o.stderr}
            cut={o.truncated.stderr}
            bytes={o.bytes?.stderr ?? null}
            err
          />
        </>
      )}
    </div>
  );
}

const FilesView = memo(function FilesView(props: { readonly detail: StepDetail; readonly scope: string }) {
  const stores = useStores();
  const diffPath = useSlice('inspector', (s) => s.diffPath);
  const files = props.detail.files;
  if (files.length === 0) return <PanelState kind="empty">This step changed no file.</PanelState>;
  const file = files.find((f) => f.path === diffPath) ?? files[0];
  return (
    <>
      <ul className="file-list" data-testid="inspector-files">
        {files.map((f) => (
          <li key={f.path}>
            <button
              type="button"
              className={f.path === file.path ? 'current' : ''}
              data-path={f.path}
              onClick={() => stores.inspector.getState().setDiffPath(f.path)}
            >
              <span className={`chg chg-${f.change}`}>{f.change[0].toUpperCase()}</span> {f.path}
              {f.folder ? '/' : ''}
              {f.by_person ? (
                <i
                  className="mark mark-hum"
                  data-testid="file-by-person"
                  data-sure={f.by_person.others ? 'no' : 'yes'}
                  title={`$ ${f.by_person.command}${f.by_person.others ? `\n${otherWritersText(f.by_person.others)}` : ''}`}
                >
                  {f.by_person.others
                    ? `changed while your terminal command ran, before step ${props.detail.step}: maybe not by you`
                    : `changed in the terminal by you, before step ${props.detail.step}`}
                </i>
              ) : null}
            </button>
          </li>
        ))}
      </ul>
      <FileShown file={file} step={props.detail.step} scope={props.scope} />
    </>
  );
});

/** One changed file: whole when one side is empty (new, emptied, removed), else a diff. */
function FileShown(props: { readonly file: FileChange; readonly step: number; readonly scope: string }) {
  const view = fileViewOf(props.file, props.step);
  switch (view.kind) {
    case 'binary':
    case 'empty':
      return <PanelState kind="empty">{view.caption}</PanelState>;
    case 'whole':
      return (
        <>
          <p className={`file-caption chg-${view.side}`} data-testid="file-caption" data-side={view.side}>
            {props.file.path}: {view.caption}
          </p>
          <FileWholeView path={props.file.path} scope={props.scope} text={view.text} side={view.side} />
        </>
      );
    case 'diff':
      return (
        <FileDiffView path={props.file.path} scope={props.scope} before={view.before} after={view.after} />
      );
    default:
      return assertNever(view);
  }
}

const MemoryView = memo(function MemoryView(props: { readonly detail: StepDetail }) {
  const m = props.detail.memory;
  if (m.length === 0) return <PanelState kind="empty">No memory writes in this step.</PanelState>;
  return (
    <table className="mem" data-testid="inspector-memory">
      <thead>
        <tr>
          <th>key</th>
          <th>before</th>
          <th>after</th>
          <th>writer</th>
        </tr>
      </thead>
      <tbody>
        {m.map((d, i) => (
          <tr key={i} className={d.corruption ? 'bad' : ''}>
            <td className="mono">{d.key}</td>
            <td className="mono">{JSON.stringify(d.before)}</td>
            <td className="mono">
              {JSON.stringify(d.after)}
              {d.corruption ? <i className="mark mark-flag"> {d.corruption}</i> : null}
            </td>
            <td>{d.writer}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
});

const RequestView = memo(function RequestView(props: {
  readonly detail: StepDetail;
  readonly scope: string;
}) {
  const d = props.detail;
  if (d.model_request === null && d.model_output === null)
    return <PanelState kind="empty">No model request in this step (a scripted or manual agent).</PanelState>;
  return (
    <>
      {d.model_request === null ? (
        <PanelState kind="empty">
          No request went to a model: this agent&apos;s output comes from a script or a person.
        </PanelState>
      ) : (
        <>
          <h4>request (messages, tools, parameters)</h4>
          <JsonText
            model="request.json"
            scope={props.scope}
            value={pretty(d.model_request)}
            label="model request"
          />
        </>
      )}
      {d.model_output ? (
        <>
          <h4>raw output</h4>
          <pre className="out" data-testid="inspector-raw-output">
            {d.model_output.raw}
          </pre>
        </>
      ) : null}
    </>
  );
});

/**
 * A result a person gave, said above every tab as an edit is: a replaced call never ran, an
 * overridden one did and what it returned is kept. Without it the typed stdout on the Output
 * tab read as the sandbox's own (only OVR in the timeline said otherwise).
 */
function GivenByPerson(props: { readonly call: CallDetail }) {
  const { call, override, replaced } = props.call;
  if (!override && !replaced) return null;
  return (
    <div className="injected" data-testid="inspector-override" data-call={call.id}>
      <i className="mark mark-ovr" title={PERSON_MARKS.overridden.title}>
        OVR
      </i>{' '}
      {override ? (
        <>
          A person gave the result the agent saw in place of {call.name}&apos;s; the tool really returned:{' '}
          <code className="mono">{resultLine(override.real)}</code>
        </>
      ) : (
        `A person gave this result; ${call.name} never ran, and the agent saw what was typed.`
      )}
    </div>
  );
}

/**
 * The Call tab of a step with no call: what it decided and that it never ran, when it was held
 * inside the step as the episode ended (the held call is in its trace); else that it had none.
 */
function NeverRanView(props: { readonly detail: StepDetail }) {
  const never = selectNeverRan(props.detail);
  if (!never) return <PanelState kind="empty">{noCallText(props.detail).tab}</PanelState>;
  return (
    <div className="never-ran" data-testid="inspector-never-ran">
      <p className="injected">{never.text}</p>
      {never.content !== null ? (
        <p className="muted">
          The answer&apos;s text: <q>{never.content}</q>
        </p>
      ) : null}
      {never.calls.map((c, i) => (
        <div className="held-call" key={i} data-testid="never-ran-call">
          <div>
            Decided, never run: <b className="mono">{c.name}</b>
          </div>
          <pre className="mono held-args">{pretty(c.arguments)}</pre>
        </div>
      ))}
    </div>
  );
}

const StepExtras = memo(function StepExtras(props: { readonly detail: StepDetail }) {
  const d = props.detail;
  const rewards = d.rewards ? Object.entries(d.rewards.components) : [];
  const max = Math.max(1e-9, ...rewards.map(([, v]) => Math.abs(v)));
  const colours = rewardColours(rewards.map(([k]) => k));
  return (
    <div className="extras">
      {d.flags.map((f, i) => (
        <div
          key={i}
          className={`flag sev-${f.severity}`}
          data-testid="inspector-flag"
          data-flag={f.rule}
          title={ruleTitle(f.rule)}
        >
          ⚑ <b>{ruleLabel(f.rule)}</b> {f.message}
        </div>
      ))}
      {d.injected.map((x, i) => (
        <div key={i} className="injected" data-testid="inspector-injected">
          <i className="mark mark-inj" title={PERSON_MARKS.injected.title}>
            INJ {x.role}
          </i>{' '}
          {x.content}
        </div>
      ))}
      {d.human.map((h, i) => (
        <div key={i} className="injected" data-testid="inspector-human">
          <i className="mark mark-hum" title={PERSON_MARKS.human.title}>
            HUM
          </i>{' '}
          you typed in the terminal after step {d.step}: <code className="mono">$ {h.command}</code>
          {h.exit_code ? <span className="bad"> (exit {h.exit_code})</span> : null}
          {h.others ? (
            <div className="caution-line" data-testid="inspector-human-others">
              {h.files?.length
                ? `Files changed while it ran (${h.files.join(', ')}) may not all be yours: `
                : 'While it ran, '}
              {otherWritersText(h.others)}.
            </div>
          ) : null}
        </div>
      ))}
      {(d.edits ?? []).map((x, i) => (
        <div key={`edit-${i}`} className="injected" data-testid="inspector-edit">
          <i className="mark mark-hum" title={PERSON_MARKS.edited.title}>
            EDIT
          </i>{' '}
          {x.stage === 'before_tool'
            ? `You changed the arguments before it ran; the agent had decided: ${decidedText(x.original, x.call_id)}`
            : `You changed the model's answer before the agent got it; the model had said: ${decidedText(x.original, null)}`}
        </div>
      ))}
      {d.calls.map((c) => (
        <GivenByPerson key={`given-${c.call.id}`} call={c} />
      ))}
      {d.parse_error ? (
        <div className="bad" data-testid="inspector-parse-error">
          {/* A refused call of a tool the task does not offer is named for what it is; the parser's words follow. */}
          {refusalText(d.parse_error)}
        </div>
      ) : null}
      {d.final !== null ? (
        <div className="final" data-testid="inspector-final">
          <b>final answer</b> {d.final}
        </div>
      ) : null}
      {d.rewards ? (
        <svg
          className="step-rewards"
          width="100%"
          height={rewards.length * 14 + 4}
          aria-label="reward components"
        >
          {rewards.map(([k, v], i) => (
            <g key={k} transform={`translate(0 ${i * 14 + 2})`}>
              <title>{rewardTitle(k)}</title>
              <text x={0} y={10} data-testid="inspector-reward-label" data-component={k}>
                {rewardLabel(k)}
              </text>
              {/* The component's colour, as in the timeline's legend; the side of the zero line
                says the sign, as the chart's below-the-line does (a penalty drawn rightwards
                read as a gain beside the number's minus). Units: [-1, 1] of the step's largest. */}
              <svg x={140} y={0} width="40%" height={13} viewBox="-1 0 2 13" preserveAspectRatio="none">
                <rect
                  x={v < 0 ? v / max : 0}
                  y={2}
                  height={9}
                  width={Math.abs(v) / max}
                  fill={colours.get(k)}
                  data-testid="inspector-reward-bar"
                  data-component={k}
                  data-sign={v < 0 ? 'negative' : 'positive'}
                />
                <line x1={0} x2={0} y1={0} y2={13} className="zero" vectorEffect="non-scaling-stroke" />
              </svg>
              <text x="100%" y={10} textAnchor="end">
                {v.toFixed(3)}
              </text>
            </g>
          ))}
        </svg>
      ) : null}
    </div>
  );
});

/** True when the agent program printed something in the step. */
function hasOutput(o: StepOutput | null): boolean {
  return o !== null && (o.stdout !== '' || o.stderr !== '');
}

/** True once the step's snapshot is recorded (the step is complete). */
function hasSnapshot(detail: StepDetail): boolean {
  return detail.step === 0 || detail.events.some((e) => e.type === 'snapshot');
}

/** Everything about the viewed step: call, result, output, files, memory, model request, the agent program's output. */
export function ToolInspector() {
  const stores = useStores();
  const branchKey = useSlice('stepper', (s) => s.branch);
  const detail = useSlice('inspector', (s) => s.detail);
  const load = useSlice('inspector', (s) => s.load);
  const error = useSlice('inspector', (s) => s.error);
  const chosenTab = useSlice('inspector', (s) => s.tab);
  const step = useSlice('inspector', (s) => s.step);
  const branch = useSlice('inspector', (s) => s.branch);
  const isExec = useSlice('stepper', (s) => runsOwnProgramKind(s.view?.summary.agent_kind ?? ''));
  const tab = selectShownTab(chosenTab, isExec);
  // The step running now, while the viewed one is the last recorded: its output streams in below.
  const runningStep = useSlice('stepper', (s) =>
    s.state === 'running' && step === selectLastStep(s) ? step + 1 : null,
  );
  const runningOutput = useSlice('agentOutput', (s) =>
    runningStep === null ? null : (s.steps[runningStep] ?? null),
  );
  const liveOutput = useSlice('agentOutput', (s) => (step === null ? null : (s.steps[step] ?? null)));
  const agentOutput = useMemo(
    () => recordedStepOutput(detail?.step === step ? detail.events : null) ?? liveOutput,
    [detail, step, liveOutput],
  );
  const [callIndex, setCallIndex] = useState(0);
  const heldStep = useSlice('stepper', (s) => (s.held && s.state !== 'running' ? s.held.step : null));
  const tabs = isExec ? INSPECTOR_TABS : INSPECTOR_TABS.filter(([id]) => id !== 'agent');
  const empty = useSlice('stepper', selectInspectorEmpty);

  let body;
  // The step paused inside has nothing recorded to inspect yet: the card above shows what it will do.
  if (step !== null && step === heldStep) body = null;
  else if (step === null || load === 'idle')
    body = empty === null ? null : <PanelState kind="empty">{empty}</PanelState>;
  else if (load === 'error')
    body = (
      <PanelState kind="error">
        Could not load step {step}: {error}
      </PanelState>
    );
  else if (load === 'running')
    body = (
      <>
        <PanelState kind="loading">
          Step {step} is running; its call shows here when it is recorded.
        </PanelState>
        {isExec ? <AgentOutputView output={agentOutput} step={step} running /> : null}
      </>
    );
  else if (!detail) body = <PanelState kind="loading">Loading step {step}…</PanelState>;
  else {
    const call = detail.calls[Math.min(callIndex, detail.calls.length - 1)];
    const scope = `${branch ?? ''}/${detail.step}`;
    body = (
      <div className="inspector-body" data-step={detail.step} data-testid="inspector-step">
        <StepExtras detail={detail} />
        <CutNotice detail={detail} branch={branch ?? ''} />
        <nav className="tabs" role="tablist">
          {tabs.map(([id, label, short]) => (
            <button
              key={id}
              type="button"
              role="tab"
              aria-selected={tab === id}
              data-tab={id}
              className={tab === id ? 'on' : ''}
              title={label}
              onClick={() => stores.inspector.getState().setTab(id)}
            >
              {short === label ? (
                label
              ) : (
                <>
                  <span className="long">{label}</span>
                  <span className="short">{short}</span>
                </>
              )}
              {id === 'files' && detail.files.length ? ` (${detail.files.length})` : ''}
              {id === 'memory' && detail.memory.length ? ` (${detail.memory.length})` : ''}
            </button>
          ))}
          {load === 'loading' ? <span className="muted">loading…</span> : null}
        </nav>
        {tab === 'call' ? (
          call ? (
            <>
              {detail.calls.length > 1 ? (
                <div className="call-pick">
                  {detail.calls.map((c, i) => (
                    <button
                      key={c.call.id}
                      type="button"
                      className={i === callIndex ? 'on' : ''}
                      onClick={() => setCallIndex(i)}
                    >
                      {c.call.name}
                    </button>
                  ))}
                </div>
              ) : null}
              <CallView call={call} scope={scope} />
            </>
          ) : detail.step === 0 ? (
            // Step 0 is the setup, no call: what the agent is asked to do is what to read first.
            <TaskView />
          ) : (
            <NeverRanView detail={detail} />
          )
        ) : null}
        {tab === 'output' ? <OutputView detail={detail} /> : null}
        {tab === 'files' ? <FilesView detail={detail} scope={scope} /> : null}
        {tab === 'memory' ? <MemoryView detail={detail} /> : null}
        {tab === 'request' ? <RequestView detail={detail} scope={scope} /> : null}
        {tab === 'agent' && isExec ? (
          <>
            {runningStep === null || hasOutput(agentOutput) ? (
              <AgentOutputView output={agentOutput} step={detail.step} running={!hasSnapshot(detail)} />
            ) : null}
            {runningStep !== null ? (
              <AgentOutputView output={runningOutput} step={runningStep} running />
            ) : null}
          </>
        ) : null}
      </div>
    );
  }
  return (
    <Panel
      testId="tool-inspector"
      title={
        step === null
          ? 'Inspector'
          : load === 'loading' && detail && detail.step !== step
            ? // The detail stays the last one loaded (no flash between steps): the header names
              // it, or a person reads the step before's call as the new one's.
              `Inspector — step ${detail.step}, step ${step} loading…`
            : `Inspector — step ${step}`
      }
      className="inspector"
    >
      <StopNotice />
      {/* Keyed by branch: an edit typed on one episode's held step never shows on another's. */}
      <HeldActionCard key={branchKey ?? ''} />
      {body}
    </Panel>
  );
}
