import type { ReplayReport } from '../../../shared/contract/models';
import { useStores } from '../stores/use-stores';
import { filesDifferSince, replayStepWords, valueLine } from '../stores/replay/replay-store';
import { countOf } from '../../../shared/count-of';

/** The re-execution's outcome: the summary, then each step's verdict (a click shows the step). */
export function ReplayReportView(props: { readonly report: ReplayReport }) {
  const stores = useStores();
  const r = props.report;
  const first = r.first_divergence;
  const steps = r.steps ?? [];
  const since = filesDifferSince(steps);
  return (
    <div className="report" data-testid="replay-report">
      <div className={r.identical ? 'good' : 'bad'} data-testid="replay-summary">
        {r.identical
          ? `Re-executed ${countOf(r.steps_replayed, 'step')}: identical to the recording.`
          : `Re-executed ${countOf(r.steps_replayed, 'step')}: ${[
              first ? `results first differ at step ${first.step}` : '',
              r.workspace_diverged_at !== null ? `files first differ at step ${r.workspace_diverged_at}` : '',
            ]
              .filter(Boolean)
              .join('; ')}.`}
      </div>
      {first ? (
        <div className="muted" data-testid="replay-first-divergence">
          step {first.step}, {first.field}: recorded “{valueLine(first.recorded)}”, now “
          {valueLine(first.actual)}”
        </div>
      ) : null}
      {steps.length ? (
        <ol className="replay-steps" aria-label="each step re-executed">
          {steps.map((v, i) => {
            const { same, mark, results, files } = replayStepWords(v, since[i]);
            return (
              <li key={v.step}>
                <button
                  type="button"
                  className={`replay-step ${same ? 'same' : 'differs'}`}
                  data-testid="replay-step"
                  data-step={v.step}
                  data-verdict={same ? 'match' : 'diverged'}
                  title={v.files.map((f) => `${f.change}: ${f.path}`).join('\n') || undefined}
                  onClick={() => stores.stepper.getState().select(v.step)}
                >
                  <span className="replay-step-n">{v.step}</span>
                  <span className={same ? 'good' : 'bad'} data-testid="replay-step-mark">
                    {mark}
                  </span>
                  <span>{results}</span>
                  <span data-testid="replay-step-files">{files}</span>
                </button>
              </li>
            );
          })}
        </ol>
      ) : null}
    </div>
  );
}
