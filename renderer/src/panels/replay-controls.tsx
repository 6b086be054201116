import { useEffect } from 'react';
import { Panel, PanelState } from '../components/panel';
import { selectLastStep, selectViewedStep } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';

function WhatIf(props: { readonly branch: string; readonly step: number }) {
  const stores = useStores();
  const detail = useSlice('inspector', (s) => s.detail);
  const args = useSlice('replay', (s) => s.whatIfArgs);
  const result = useSlice('replay', (s) => s.whatIfResult);
  const running = useSlice('replay', (s) => s.running);
  const call = detail?.step === props.step ? detail.calls[0]?.call : undefined;
  const a = stores.replay.getState();
  // Start from the recorded arguments of the selected call.
  useEffect(() => {
    if (call) stores.replay.getState().setWhatIfArgs(JSON.stringify(call.arguments, null, 2));
  }, [call, stores]);
  if (!call) return <div className="muted">What if…: step {props.step} made no tool call.</div>;
  return (
    <details className="whatif" data-testid="whatif">
      <summary>
        What if… ({call.name} at step {props.step})
      </summary>
      <textarea
        data-testid="whatif-args"
        rows={4}
        value={args}
        onChange={(e) => a.setWhatIfArgs(e.target.value)}
      />
      <button
        type="button"
        data-testid="whatif-run"
        disabled={running !== null}
        onClick={() => void a.whatIf(props.branch, props.step, call.name)}
      >
        {running === 'whatif' ? 'Running in a throwaway sandbox…' : 'Run in a throwaway sandbox'}
      </button>
      {result ? (
        <div className="whatif-result" data-testid="whatif-result">
          <div className="muted">
            observation (live sandbox untouched)
            {result.tree_hash_after ? ` · tree ${result.tree_hash_after.slice(0, 12)}` : ''}
          </div>
          <pre className="out" data-testid="whatif-stdout">
            {result.result.stdout ?? ''}
            {result.result.stderr ? `\n${result.result.stderr}` : ''}
            {result.result.error ? `\n[${result.result.error.code}] ${result.result.error.message}` : ''}
          </pre>
          <div className="muted">
            exit {result.result.exit_code ?? '—'} · {result.result.duration_ms.toFixed(0)} ms
          </div>
        </div>
      ) : null}
    </details>
  );
}

function Compare(props: { readonly branch: string }) {
  const stores = useStores();
  const branches = useSlice('stepper', (s) => s.branches);
  const other = useSlice('replay', (s) => s.compareWith);
  const comparison = useSlice('replay', (s) => s.comparison);
  const running = useSlice('replay', (s) => s.running);
  const a = stores.replay.getState();
  const others = branches.filter((b) => b.branch !== props.branch);
  if (others.length === 0) return null;
  return (
    <details className="compare" data-testid="compare">
      <summary>Compare with another branch</summary>
      <div className="row">
        <select value={other} onChange={(e) => a.setCompareWith(e.target.value)} data-testid="compare-with">
          <option value="">choose a branch…</option>
          {others.map((b) => (
            <option key={b.branch} value={b.branch}>
              {b.branch} {b.fork_step !== null ? `(fork @${b.fork_step})` : '(main)'}
            </option>
          ))}
        </select>
        <button
          type="button"
          disabled={!other || running !== null}
          onClick={() => void a.compare(props.branch)}
        >
          {running === 'compare' ? 'Comparing…' : 'Compare'}
        </button>
      </div>
      {comparison ? (
        <table className="cmp" data-testid="compare-table">
          <thead>
            <tr>
              <th>#</th>
              <th>this branch</th>
              <th>other</th>
              <th>workspace</th>
            </tr>
          </thead>
          <tbody>
            {comparison.rows.map((r) => (
              <tr key={r.step} className={r.same_action && r.same_result ? '' : 'diff'} data-step={r.step}>
                <td>{r.step}</td>
                <td className="mono">{r.a ? `${r.a.tools.join(',')} ${r.a.summary}` : '—'}</td>
                <td className="mono">{r.b ? `${r.b.tools.join(',')} ${r.b.summary}` : '—'}</td>
                <td className="mono">
                  {r.workspace.length === 0
                    ? 'same'
                    : r.workspace.map((w) => (
                        <details key={w.path}>
                          <summary>
                            {w.path} ({w.status})
                          </summary>
                          <pre className="out">{`--- this\n${w.a ?? '(absent)'}\n--- other\n${w.b ?? '(absent)'}`}</pre>
                        </details>
                      ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {comparison ? (
        <div className="muted">
          {comparison.diverged_at ? `first difference at step ${comparison.diverged_at}` : 'no difference'}
        </div>
      ) : null}
    </details>
  );
}

/** Scrub to any step; roll the sandbox back, fork, what-if, re-execute, compare branches. */
export function ReplayControls() {
  const stores = useStores();
  const branch = useSlice('stepper', (s) => s.branch);
  const live = useSlice('stepper', (s) => s.live);
  const first = useSlice('stepper', (s) => (s.rows.length ? s.rows[0].step : 0));
  const last = useSlice('stepper', selectLastStep);
  const viewed = useSlice('stepper', selectViewedStep);
  const following = useSlice('stepper', (s) => s.selectedStep === null);
  const running = useSlice('replay', (s) => s.running);
  const error = useSlice('replay', (s) => s.error);
  const notice = useSlice('replay', (s) => s.notice);
  const report = useSlice('replay', (s) => s.report);
  const stepper = stores.stepper.getState();
  const replay = stores.replay.getState();

  if (!branch || last === 0)
    return (
      <Panel testId="replay-controls" title="Replay" className="replay">
        <PanelState kind="empty">Nothing to scrub yet: open an episode and take a step.</PanelState>
      </Panel>
    );
  const step = viewed ?? last;
  return (
    <Panel testId="replay-controls" title="Replay" className="replay">
      <div className="row scrub">
        <button
          type="button"
          aria-label="previous step"
          onClick={stepper.selectPrevious}
          disabled={step <= first}
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
        <button type="button" aria-label="next step" onClick={stepper.selectNext} disabled={step >= last}>
          →
        </button>
        <span className="mono" data-testid="scrub-label">
          step {step} / {last}
        </span>
        {!following ? (
          <button type="button" onClick={() => stepper.select(null)} title="follow the latest step">
            latest
          </button>
        ) : null}
      </div>
      <div className="row">
        <button
          type="button"
          data-testid="rollback"
          disabled={!live || running !== null}
          title={
            live
              ? 'restore workspace, memory, conversation and shell to just after this step'
              : 'only a live branch has a sandbox to roll back'
          }
          onClick={() => void replay.rollback(branch, step)}
        >
          {running === 'rollback' ? 'Rolling back…' : 'Roll back sandbox to here'}
        </button>
        {!live ? (
          <button
            type="button"
            data-testid="reopen"
            disabled={running !== null}
            title="restore this step in a fresh sandbox and continue live from it"
            onClick={() => void replay.reopen(branch, step)}
          >
            {running === 'reopen' ? 'Reopening…' : 'Reopen live here'}
          </button>
        ) : null}
        <button
          type="button"
          data-testid="fork"
          disabled={running !== null}
          onClick={() => void replay.fork(branch, step)}
        >
          {running === 'fork' ? 'Forking…' : 'Fork from here'}
        </button>
        <button
          type="button"
          data-testid="replay-verify"
          disabled={running !== null}
          onClick={() => void replay.replay(branch)}
        >
          {running === 'replay' ? 'Re-executing…' : 'Re-execute replay'}
        </button>
      </div>
      {report ? (
        <div className={`report ${report.identical ? 'good' : 'bad'}`} data-testid="replay-report">
          {report.identical
            ? `replayed ${report.steps_replayed} steps: identical to the recording`
            : report.first_divergence
              ? `first divergence at step ${report.first_divergence.step} (${report.first_divergence.field}): recorded ${JSON.stringify(report.first_divergence.recorded)} → now ${JSON.stringify(report.first_divergence.actual)}`
              : `replayed ${report.steps_replayed} steps`}
          {report.workspace_diverged_at !== null
            ? ` · workspace diverged at step ${report.workspace_diverged_at}`
            : ''}
          {report.first_divergence ? (
            <button type="button" onClick={() => stepper.select(report.first_divergence?.step ?? null)}>
              show step
            </button>
          ) : null}
        </div>
      ) : null}
      <WhatIf branch={branch} step={step} />
      <Compare branch={branch} />
      {error ? <PanelState kind="error">{error}</PanelState> : null}
      {notice ? (
        <div className="notice" data-testid="replay-notice">
          {notice}
        </div>
      ) : null}
    </Panel>
  );
}
