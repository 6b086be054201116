import type { BranchSummary } from '../../../shared/contract/models';
import { selectCaseRuns, type CaseRun } from '../stores/episodes/episodes-store';
import { endText, selectCanStep } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';
import { MarkdownLite } from './markdown-lite';
import { countOf } from '../../../shared/count-of';

/** How a case run ended, in words: not started, running, stopped part-way, or its status and its QA flags. */
function outcomeOf(
  summary: BranchSummary | null,
  running: boolean,
  paused: boolean,
): { text: string; flags: number | null } {
  if (running) return { text: 'running…', flags: null };
  if (summary && summary.status === null && summary.steps === 0 && !summary.live)
    return { text: 'not started yet', flags: null };
  if (summary && summary.status === null && summary.steps === 0)
    return { text: 'ready, not started: press ▶ Run it', flags: null };
  // Live part-way: shown and not running, it waits for the person (stepped, or at a breakpoint).
  if (summary && summary.status === null && summary.live)
    return {
      text: paused ? `paused at step ${summary.steps}: ▶ Run it goes on` : `live, at step ${summary.steps}`,
      flags: null,
    };
  if (!summary || summary.status === null) return { text: 'running…', flags: null };
  return {
    text: `${summary.status} — ${endText(summary.status, summary.end_reason ?? '')}`,
    flags: summary.flags,
  };
}

/** One run of the case: which version, how it ended, its flags; a click opens it. */
function RunLine(props: { readonly run: CaseRun; readonly current: string | null }) {
  const stores = useStores();
  const { run } = props;
  const running = useSlice('stepper', (s) => s.branch === run.branch && s.state === 'running');
  const paused = useSlice('stepper', (s) => s.branch === run.branch && s.live && s.state !== 'running');
  const { text, flags } = outcomeOf(run.summary, running, paused);
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
        <b>{run.variant === 'fixed' ? 'Fixed version' : 'As shipped (broken)'}</b>
        <span className="muted">{text}</span>
        {flags === null ? null : flags > 0 ? (
          <span className="flag-count" data-testid="case-run-flags">
            ⚑ {countOf(flags, 'QA flag')}
          </span>
        ) : (
          <span className="good" data-testid="case-run-flags">
            no QA flags
          </span>
        )}
      </button>
    </li>
  );
}

/** The open case's walkthrough, beside the timeline: what to look at, and how to fix it. */
export function CaseWalkthrough() {
  const stores = useStores();
  const active = useSlice('episodes', (s) => s.activeCase);
  // The runs' statuses whatever the library search shows.
  const episodes = useSlice('episodes', (s) => s.allEpisodes);
  const starting = useSlice('episodes', (s) => s.starting);
  const error = useSlice('episodes', (s) => s.error);
  const startFailed = useSlice('episodes', (s) => s.startFailed);
  const current = useSlice('stepper', (s) => s.branch);
  // The open run can go on: the walkthrough says how, where the person is reading.
  const canRun = useSlice('stepper', (s) => selectCanStep(s) && s.state !== 'ended');
  if (!active) return null;
  const runs = selectCaseRuns(active, episodes);
  const openRun = runs.find((r) => r.branch === current) ?? null;
  const other = active.variant === 'fixed' ? 'broken' : 'fixed';
  const a = stores.episodes.getState();
  return (
    <aside
      className="walkthrough"
      data-testid="case-walkthrough"
      data-case={active.case.id}
      data-variant={active.variant}
    >
      <header className="panel-head">
        <h2>Case: {active.case.title}</h2>
        <button type="button" onClick={() => a.closeCase()} aria-label="close walkthrough">
          ✕
        </button>
      </header>
      <div className="case-versions">
        {/* Which version is open says itself beside the button, leaving the title the header's width. */}
        {active.variant === 'fixed' ? (
          <span className="badge st-succeeded" data-testid="case-variant">
            fixed version open
          </span>
        ) : null}
        {active.case.has_fixed ? (
          <button
            type="button"
            data-testid="case-run-variant"
            data-variant={other}
            disabled={starting !== null}
            // The person asked to run it: it runs at once (a second click on "Run it" is not needed).
            onClick={() => void a.openCase(active.case, other, { run: true })}
          >
            {starting === active.case.id
              ? 'starting…'
              : other === 'fixed'
                ? '▶ Run the fixed version'
                : '▶ Run the broken version again'}
          </button>
        ) : null}
        {startFailed === active.case.id && error ? (
          <div className="state state-error" role="alert" data-testid="case-start-error">
            {error}
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
        {runs.length ? (
          <ul className="case-runs" aria-label="runs of this case">
            {runs.map((r) => (
              <RunLine key={r.variant} run={r} current={current} />
            ))}
          </ul>
        ) : null}
      </div>
      <div className="panel-body">
        {active.readme === null ? (
          <div className="state state-loading">Loading the walkthrough…</div>
        ) : (
          <MarkdownLite text={active.readme} />
        )}
      </div>
    </aside>
  );
}
