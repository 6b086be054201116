import { flaggedSuccess, FLAGGED_MARK, FLAGGED_TITLE } from '../../../shared/end-words';
import { firstWhy, whyNot } from './why-not';
import { WhySlot } from './why-lines';
import {
  caseRunOutcome,
  selectCaseRuns,
  selectCaseShown,
  type CaseRun,
  type CaseShown,
} from '../stores/episodes/episodes-store';
import { selectCanStep, selectRecordedStatus } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';
import { MarkdownLite } from './markdown-lite';
import { countOf } from '../../../shared/count-of';

/** One run of the case: which version, how it ended, its flags; a click opens it. */
function RunLine(props: { readonly run: CaseRun; readonly current: string | null }) {
  const stores = useStores();
  const { run } = props;
  const running = useSlice('stepper', (s) => s.branch === run.branch && s.state === 'running');
  const paused = useSlice('stepper', (s) => s.branch === run.branch && s.live && s.state !== 'running');
  const held = useSlice('stepper', (s) =>
    s.branch === run.branch && s.live && s.state !== 'running' && s.state !== 'ended'
      ? (s.held?.step ?? null)
      : null,
  );
  // Its end as the bar has it (the stepper's), read as values: the summary lags it.
  const endStatus = useSlice('stepper', (s) =>
    s.branch === run.branch && s.state === 'ended' ? selectRecordedStatus(s) : null,
  );
  const endReason = useSlice('stepper', (s) =>
    s.branch === run.branch ? (s.view?.end?.end_reason ?? s.endSeen?.end_reason ?? null) : null,
  );
  const ended =
    endStatus !== null && endStatus !== 'recorded' && endReason !== null
      ? { status: endStatus, end_reason: endReason }
      : null;
  const { text, hint, flags } = caseRunOutcome(run.summary, { running, paused, held, ended });
  // An ended run's "failed — why": the word is what a person reads first, the dash kept with it
  // (a non-breaking space): wrapped, "— the agent gave its final answer" led a line with it.
  const [word, rest] = text.includes(' — ')
    ? [text.split(' — ')[0], text.slice(text.indexOf(' — ') + 3)]
    : ['', text];
  const dash = rest !== text ? '\u00a0—' : '';
  const title = hint ? `${text}: ${hint}` : text;
  return (
    <li>
      <button
        type="button"
        className={`case-run${run.branch === props.current ? ' current' : ''}`}
        data-testid="case-run"
        data-variant={run.variant}
        data-branch={run.branch}
        title="Open this run in the timeline"
        onClick={() => void stores.stepper.getState().open(run.branch)}
      >
        <b>{run.variant === 'fixed' ? 'Fixed run' : 'Broken run'}</b>
        {flags === null ? null : flags > 0 ? (
          <span className="flag-count" data-testid="case-run-flags">
            ⚑ {countOf(flags, 'QA flag')}
          </span>
        ) : (
          <span className="good" data-testid="case-run-flags">
            no QA flags
          </span>
        )}
        {/* One line a run (issue 33, item 11: the walkthrough keeps its room): the outcome's word
            whole, the sentence after it cut, whole on hover. */}
        {word ? (
          // The word and its dash one piece that never breaks apart (flex items wrap apart).
          <span className="case-run-word">
            {flaggedSuccess(word, flags ?? 0) ? (
              <span className="badge st-flagged" data-testid="case-run-status" title={FLAGGED_TITLE}>
                {word}
                {FLAGGED_MARK}
              </span>
            ) : (
              <span className="muted" data-testid="case-run-status">
                {word}
              </span>
            )}
            {dash ? <span className="muted">{dash}</span> : null}
          </span>
        ) : null}
        <span className="muted case-run-text" title={title}>
          {rest}
        </span>
      </button>
    </li>
  );
}

/**
 * "Compare broken vs fixed" (issue 33, item 12): the case's two runs are separate episodes, so
 * "Compare with another branch…" never offered one against the other. The broken run opens and
 * the step-aligned comparison (the one of two branches) shows it beside the fixed run.
 */
function CompareRuns(props: { readonly runs: readonly CaseRun[] }) {
  const stores = useStores();
  const broken = props.runs.find((r) => r.variant === 'broken') ?? null;
  const fixed = props.runs.find((r) => r.variant === 'fixed') ?? null;
  const comparing = useSlice('replay', (s) => s.running === 'compare');
  const why = firstWhy(
    !broken && 'Run the broken version first: the comparison needs both runs.',
    !fixed && 'Run the fixed version first (above): the comparison needs both runs.',
    comparing && 'Comparing…',
  );
  return (
    <>
      <button
        type="button"
        data-testid="case-compare"
        {...whyNot(
          why,
          'the broken and the fixed run step by step: where they first differ, files, rewards, QA flags',
          COMPARE_WHY_ID,
        )}
        onClick={() => {
          if (!broken || !fixed) return;
          void (async () => {
            const stepper = stores.stepper.getState();
            if (stepper.branch !== broken.branch) await stepper.open(broken.branch);
            await stores.replay
              .getState()
              .compareRuns(
                { branch: broken.branch, name: 'broken run' },
                { branch: fixed.branch, name: 'fixed run' },
              );
          })();
        }}
      >
        Compare broken vs fixed
      </button>
      {/* Its reason, pointed at or focused, in the flow under it: a bubble covered the runs' lines. */}
      <WhySlot id={COMPARE_WHY_ID} />
    </>
  );
}

/** The line under Compare broken vs fixed saying why it cannot compare yet (WhySlot). */
const COMPARE_WHY_ID = 'case-compare-why';

/** The line under the case's run buttons saying why they cannot start now (WhySlot). */
const CASE_START_WHY_ID = 'case-start-why';

/**
 * What the window shows, for the open case (see {@link selectCaseShown}): the drawer and the
 * pane around it read it (another episode on screen, the drawer shrinks to its note and runs).
 */
export function useCaseShown(): CaseShown {
  const active = useSlice('episodes', (s) => s.activeCase);
  const episodes = useSlice('episodes', (s) => s.allEpisodes);
  const current = useSlice('stepper', (s) => s.branch);
  const openBranches = useSlice('stepper', (s) => s.branches);
  return selectCaseShown(selectCaseRuns(active, episodes), current, openBranches, episodes);
}

/** Which run of the case the window shows, said beside its buttons (from the stepper, not the last start). */
function ShownBadge(props: { readonly shown: CaseShown; readonly hasFixed: boolean }) {
  const { shown } = props;
  if (shown.kind === 'none') return null;
  if (shown.kind === 'other')
    return (
      <div className="state state-empty" data-testid="case-away">
        The window shows {shown.task ? <b>{shown.task}</b> : 'another episode'}, not a run of this case: open
        one of its runs below to come back to it and its walkthrough.
      </div>
    );
  // A case with no fixed version has only one run: nothing to tell apart.
  if (!props.hasFixed && shown.kind === 'run') return null;
  const which = shown.variant === 'fixed' ? 'fixed version' : 'broken version';
  return (
    <span
      className={`badge ${shown.variant === 'fixed' ? 'st-succeeded' : 'st-failed'}`}
      data-testid="case-variant"
      data-variant={shown.variant}
    >
      {shown.kind === 'run' ? `${which} open` : `a branch of the ${which} open`}
    </span>
  );
}

/** The open case's walkthrough, beside the timeline: what to look at, and how to fix it. */
export function CaseWalkthrough() {
  const stores = useStores();
  const active = useSlice('episodes', (s) => s.activeCase);
  // The runs' statuses whatever the library search shows.
  const episodes = useSlice('episodes', (s) => s.allEpisodes);
  const starting = useSlice('episodes', (s) => s.starting);
  const startFailed = useSlice('episodes', (s) => s.startFailed);
  const current = useSlice('stepper', (s) => s.branch);
  const shown = useCaseShown();
  // The open run can go on: the walkthrough says how, where the person is reading.
  const canRun = useSlice('stepper', (s) => selectCanStep(s) && s.state !== 'ended');
  if (!active) return null;
  const runs = selectCaseRuns(active, episodes);
  const openRun = runs.find((r) => r.branch === current) ?? null;
  // The other version than the one on screen (the last started while the window shows neither).
  const onScreen = shown.kind === 'run' || shown.kind === 'branch' ? shown.variant : active.variant;
  const other = onScreen === 'fixed' ? 'broken' : 'fixed';
  const away = shown.kind === 'other';
  const a = stores.episodes.getState();
  return (
    <aside
      className="walkthrough"
      data-testid="case-walkthrough"
      data-case={active.case.id}
      data-variant={active.variant}
      data-shown={shown.kind}
    >
      <header className="panel-head">
        <h2>Case: {active.case.title}</h2>
        <button type="button" onClick={() => a.closeCase()} aria-label="close walkthrough">
          ✕
        </button>
      </header>
      <div className="case-versions">
        {/* Which version is open says itself beside the button, leaving the title the header's width. */}
        <ShownBadge shown={shown} hasFixed={active.case.has_fixed === true} />
        {active.case.has_fixed && !away ? (
          <button
            type="button"
            data-testid="case-run-variant"
            data-variant={other}
            {...whyNot(starting !== null && 'Starting…', undefined, CASE_START_WHY_ID)}
            // The person asked to run it: it runs at once (issue 19 item 8: no second click on
            // "Run it"); to step through it, Pause (or a breakpoint) holds it as any live run.
            onClick={() => void a.openCase(active.case, other, { run: true })}
          >
            {starting === active.case.id
              ? 'starting…'
              : other === 'fixed'
                ? '▶ Run the fixed version'
                : '▶ Run the broken version again'}
          </button>
        ) : null}
        {active.reopened !== undefined && active.reopened === current ? (
          <div className="state state-empty" data-testid="case-reopened">
            Your broken run from before, as it ended: opening the case again does not start a new one.{' '}
            <button
              type="button"
              data-testid="case-run-again"
              {...whyNot(starting !== null && 'Starting…', undefined, CASE_START_WHY_ID)}
              onClick={() => void a.openCase(active.case, 'broken', { fresh: true })}
            >
              ▶ Run the broken version again
            </button>
          </div>
        ) : null}
        <WhySlot id={CASE_START_WHY_ID} />
        {startFailed?.key === active.case.id ? (
          <div className="state state-error" role="alert" data-testid="case-start-error">
            {startFailed.text}
          </div>
        ) : null}
        {openRun && canRun ? (
          <button
            type="button"
            className="primary"
            data-testid="case-run-continue"
            title="Runs the open episode until it ends or a breakpoint pauses it (Continue, F5)"
            onClick={() => void stores.stepper.getState().run()}
          >
            ▶ Run it <kbd>F5</kbd>
          </button>
        ) : null}
        {active.case.has_fixed && !away ? <CompareRuns runs={runs} /> : null}
        {runs.length ? (
          <ul className="case-runs" aria-label="runs of this case">
            {runs.map((r) => (
              <RunLine key={r.variant} run={r} current={current} />
            ))}
          </ul>
        ) : null}
      </div>
      {/* Another episode on screen: the runs above are the way back, the text waits for them. */}
      <div className="panel-body" hidden={away}>
        {active.readme === null ? (
          <div className="state state-loading">Loading the walkthrough…</div>
        ) : (
          <MarkdownLite text={active.readme} />
        )}
      </div>
    </aside>
  );
}
