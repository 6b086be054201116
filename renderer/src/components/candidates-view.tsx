import { qaStopOf, ruleLabel, ruleTitle } from '../../../shared/qa/rule-label';
import { memo } from 'react';
import { countOf } from '../../../shared/count-of';
import { ConsentAskView } from './consent-ask';
import { CountField, FieldProblem } from './count-field';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import type { CandidateView } from '../../../shared/contract/candidates';
import {
  CANDIDATES_N,
  CANDIDATES_RUN_ON,
  candidatesStepRange,
  selectCandidatesEntry,
  selectCandidatesBusyWhy,
  selectCandidatesProblem,
  selectCandidatesTryWhy,
  selectCandidatesUnderWay,
  type CandidatesState,
} from '../stores/candidates/candidates-store';
import { selectLastStep, selectWayOn } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';

function actionText(c: CandidateView): string {
  if (c.action.parse_error) return `could not be read: ${c.action.parse_error}`;
  if (c.action.final !== null) return `final answer: ${c.action.final}`;
  // A space after each key and comma (`{ "path": "config.ini", … }`): the card's narrow column
  // wraps there, not inside a name ("config.in" / "i" at 1024×700).
  return c.action.calls
    .map((x) => `${x.name} ${JSON.stringify(x.arguments, null, 1).replace(/\n */g, ' ')}`)
    .join('\n');
}

function resultText(c: CandidateView): string {
  if (c.result.length === 0) return c.action.final !== null ? `episode ${c.status}` : '(no tool ran)';
  return c.result
    .map((r) =>
      r.ok
        ? `exit ${r.exit_code ?? 0}${r.stdout ? `\n${r.stdout.trimEnd()}` : ''}${r.stderr ? `\n${r.stderr.trimEnd()}` : ''}`
        : `[${r.error?.code}] ${r.error?.message ?? ''}`,
    )
    .join('\n');
}

const ORIGIN: Record<CandidateView['origin'], string> = {
  model: 'the agent',
  person: 'typed',
  file: 'from a file',
};
const SIGN = { added: '+', modified: '~', deleted: '−' } as const;

function CandidateCard(props: {
  readonly c: CandidateView;
  readonly busy: boolean;
  readonly onPick: () => void;
}) {
  const { c } = props;
  const captured = c.files_changed.filter((f) => f.captured !== false);
  return (
    <article
      className="cand"
      data-testid="candidate"
      data-index={c.index}
      aria-label={`candidate ${c.index + 1}`}
    >
      {/* Pick sits at the card's top: in reach whatever the action's and result's length. */}
      <header>
        <b>#{c.index + 1}</b> <span className="muted">{ORIGIN[c.origin]}</span>
        {c.seed !== null ? <span className="muted"> · seed {c.seed}</span> : null}
        <span className={`badge st-${c.status}`}>{c.status === 'paused' ? 'can continue' : c.status}</span>
        <button
          type="button"
          className="primary"
          data-testid="candidate-pick"
          {...whyNot(props.busy && 'Working…', undefined, `candidate-why-${c.index}`)}
          onClick={props.onPick}
        >
          Continue with #{c.index + 1}
        </button>
      </header>
      <WhySlot id={`candidate-why-${c.index}`} />
      <div className="cand-label">action</div>
      <pre className="out cand-action">{actionText(c)}</pre>
      <div className="cand-label">result</div>
      <pre
        className={`out cand-result ${c.result.some((r) => !r.ok || (r.exit_code ?? 0) !== 0) ? 'err' : ''}`}
      >
        {resultText(c)}
      </pre>
      <div className="cand-label">
        files {c.files_changed.length === 0 ? <span className="muted">unchanged</span> : null}
      </div>
      {c.files.map((f) => (
        <details key={f.path} className="cand-file" open={c.files.length <= 2}>
          <summary className="mono">
            {SIGN[f.change]} {f.path}
          </summary>
          <pre className="out">
            {f.binary
              ? '(binary)'
              : `--- before\n${f.before ?? '(absent)'}\n+++ after\n${f.after ?? '(absent)'}`}
          </pre>
        </details>
      ))}
      {c.files_changed
        .filter((f) => f.captured === false)
        .map((f) => (
          <div
            key={`uncaptured:${f.path}`}
            className="mono cand-file warn"
            data-testid="candidate-uncaptured"
          >
            {SIGN[f.change]} {f.path}{' '}
            <span className="muted">(over the snapshot size cap: not captured)</span>
          </div>
        ))}
      {captured.length > c.files.length ? (
        <div className="muted">and {captured.length - c.files.length} more</div>
      ) : null}
      <div className="cand-facts">
        <span>
          reward <b data-testid="candidate-reward">{c.reward === null ? '–' : Number(c.reward.toFixed(3))}</b>
        </span>
        {c.flags.length === 0 ? (
          <span className="muted">no QA flags</span>
        ) : (
          c.flags.map((f, i) => (
            <span key={i} className={`flag sev-${f.severity}`} title={ruleTitle(f.rule, f.message)}>
              ⚑ {ruleLabel(f.rule)}: {f.message}
            </span>
          ))
        )}
      </div>
    </article>
  );
}

/**
 * The Replay panel's candidates button: opens the side-by-side view on the candidates held
 * for this step, or prepares them for it. It sits in the panel's row of action buttons.
 */
export function CandidatesButton(props: {
  readonly branch: string;
  readonly step: number;
  /** The WhySlot of its row, where its reason is said while it cannot act. */
  readonly whyIn: string;
}) {
  const stores = useStores();
  // The branch's agent cannot go on (its model endpoint failed): the slice refuses candidates.
  const again = useSlice('stepper', (s) => selectWayOn(s).againFails);
  // Three primitives, not the entry object: a fresh object per read would re-render without end.
  const entry = (s: CandidatesState) => selectCandidatesEntry(s, props.branch, props.step, again);
  const label = useSlice('candidates', (s) => entry(s).label);
  const opens = useSlice('candidates', (s) => entry(s).opens);
  const why = useSlice('candidates', (s) => entry(s).why);
  const latest = useSlice('stepper', selectLastStep);
  return (
    <button
      type="button"
      data-testid="candidates-open"
      {...whyNot(
        why,
        'try other actions for a step side by side, each in its own throwaway fork, and continue with one',
        props.whyIn,
      )}
      onClick={() => {
        if (opens === 'prepare') stores.candidates.getState().prepare(props.step, props.branch, latest);
        stores.sideBySide.getState().show('candidates');
      }}
    >
      {label}
    </button>
  );
}

/**
 * Candidates' words in the Replay panel, under its action buttons: the QA breakpoint's offer
 * (with its button) and how the last pick went (the view closes on a pick). Memoized: the
 * panel renders again on every step change, which these words do not depend on.
 */
export const CandidatesNotes = memo(function CandidatesNotes(props: { readonly branch: string }) {
  const stores = useStores();
  const notice = useSlice('candidates', (s) => s.notice);
  const shown = useSlice('sideBySide', (s) => s.view === 'candidates');
  const stop = useSlice('stepper', (s) => s.stopReason);
  const latest = useSlice('stepper', selectLastStep);
  const a = stores.candidates.getState();
  // A live QA breakpoint's message (engine/harness/breakpoints.ts, through qaStopText).
  const qaStop = stop ? qaStopOf(stop) : null;
  return (
    <>
      {qaStop ? (
        <div className="cand-qa" data-testid="candidates-qa">
          QA flagged “{qaStop.label}” at step {latest}: {qaStop.message}
          <button
            type="button"
            data-testid="candidates-here"
            onClick={() => a.prepare(latest, props.branch, latest)}
          >
            Try candidates here
          </button>
        </div>
      ) : null}
      {notice && !shown ? (
        <div className="notice" data-testid="candidates-notice">
          {notice}
        </div>
      ) : null}
    </>
  );
});

/**
 * Candidates at a step, in the side-by-side view: the agent's own (N asks) and typed ones,
 * each run in its own throwaway fork from the step before, shown side by side (wrapping
 * onto rows, never scrolling sideways); picking one continues the episode on it and keeps
 * the others as rejected branches.
 */
export function CandidatesView(props: { readonly branch: string; readonly step: number }) {
  const stores = useStores();
  const at = useSlice('candidates', (s) => s.at);
  const n = useSlice('candidates', (s) => s.n);
  const typed = useSlice('candidates', (s) => s.typed);
  const runOn = useSlice('candidates', (s) => s.runOn);
  const held = useSlice('candidates', (s) => s.set);
  const running = useSlice('candidates', selectCandidatesUnderWay);
  const busyWhy = useSlice('candidates', selectCandidatesBusyWhy);
  // A view opened before the branch's model endpoint failed stays open: its Try says so too.
  const again = useSlice('stepper', (s) => selectWayOn(s).againFails);
  const tryWhy = useSlice('candidates', (s) => selectCandidatesTryWhy(s, again));
  const error = useSlice('candidates', (s) => s.error);
  const notice = useSlice('candidates', (s) => s.notice);
  const consentAsk = useSlice('candidates', (s) => s.consentAsk);
  const problem = useSlice('candidates', selectCandidatesProblem);
  const latest = useSlice('stepper', selectLastStep);
  const a = stores.candidates.getState();
  const target = at !== null ? at + 1 : props.step;
  return (
    <section className="candidates" data-testid="candidates" aria-label={`candidates for step ${target}`}>
      <div className="row cand-form">
        <label>
          step{' '}
          <CountField
            range={candidatesStepRange(latest)}
            value={target}
            label="step to replace"
            testId="candidates-step"
            problemId="candidates-problem"
            onChange={(v) => a.prepare(v, undefined, latest)}
          />
        </label>
        <label>
          ask the agent{' '}
          <CountField
            range={CANDIDATES_N}
            value={n}
            label="candidates from the agent"
            testId="candidates-n"
            problemId="candidates-problem"
            onChange={(v) => a.setN(v)}
          />{' '}
          times
        </label>
        <label>
          then run on{' '}
          <CountField
            range={CANDIDATES_RUN_ON}
            value={runOn}
            label="steps to run on"
            testId="candidates-run-on"
            problemId="candidates-problem"
            onChange={(v) => a.setRunOn(v)}
          />{' '}
          steps
        </label>
      </div>
      <FieldProblem id="candidates-problem" testId="candidates-problem" problem={problem} />
      <textarea
        rows={3}
        value={typed}
        data-testid="candidates-typed"
        aria-label="typed candidates"
        placeholder={
          'your own candidates, one per line:\nwrite_file {"path": "fix.py", "content": "…"}\n{"content": "final answer"}'
        }
        onChange={(e) => a.setTyped(e.target.value)}
      />
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="candidates-try"
          {...whyNot(
            tryWhy,
            'run each candidate in its own throwaway fork from the step before',
            'candidates-try-why',
          )}
          onClick={() => {
            if (at === null) a.prepare(props.step, undefined, latest);
            void a.tryAt(props.branch);
          }}
        >
          {running === 'try' ? 'Trying in throwaway forks…' : 'Try side by side'}
        </button>
        {held ? (
          <button
            type="button"
            data-testid="candidates-discard"
            {...whyNot(busyWhy, undefined, 'candidates-try-why')}
            onClick={() => void a.discard()}
          >
            Close all
          </button>
        ) : null}
        {error ? (
          <span className="bad" role="alert" data-testid="candidates-error">
            {error}
          </span>
        ) : null}
        {notice ? (
          <span className="notice" data-testid="candidates-notice">
            {notice}
          </span>
        ) : null}
      </div>
      <WhySlot id="candidates-try-why" />
      {consentAsk ? (
        <ConsentAskView
          testId="candidates-consent"
          message={consentAsk.message}
          action="try"
          onAllow={a.allowConsent}
          onDeny={a.denyConsent}
        />
      ) : null}
      {held ? (
        <>
          <div className="muted">
            {countOf(held.candidates.length, 'candidate')} for step {held.step + 1}, each in its own fork from
            step {held.step}
            {held.notes.length ? ` · ${held.notes.join('; ')}` : ''}
          </div>
          <div className="cand-grid" data-testid="candidates-grid">
            {held.candidates.map((c) => (
              <CandidateCard
                key={c.branch}
                c={c}
                busy={busyWhy !== null}
                onPick={() => void a.pick(c.index)}
              />
            ))}
          </div>
        </>
      ) : null}
    </section>
  );
}
