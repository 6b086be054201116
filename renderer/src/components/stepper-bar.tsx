import { IdText } from './id-text';
import { TeachingButtons } from './teaching-buttons';
import { selectCanStep } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';

/**
 * The debugger toolbar: step, continue, pause, stop, and where the branch is. Why it
 * stopped, how it ended and what it refused are said in full above the inspector (`StopNotice`).
 */
export function StepperBar() {
  const stores = useStores();
  const branch = useSlice('stepper', (s) => s.branch);
  const view = useSlice('stepper', (s) => s.view);
  const state = useSlice('stepper', (s) => s.state);
  const live = useSlice('stepper', (s) => s.live);
  const busy = useSlice('stepper', (s) => s.busy);
  const canStep = useSlice('stepper', selectCanStep);
  const stopPoints = useSlice('stepper', (s) => s.stopPoints);
  const a = stores.stepper.getState();
  return (
    <div className="stepper-bar" data-testid="stepper-bar" data-state={state ?? 'none'} data-busy={busy}>
      <span className="brand">stepbox</span>
      <button
        type="button"
        data-testid="btn-step"
        disabled={!canStep}
        onClick={() => void a.step()}
        title="Step (F10)"
      >
        ⤼ Step <kbd>F10</kbd>
      </button>
      <button
        type="button"
        data-testid="btn-continue"
        disabled={!canStep}
        onClick={() => void a.run()}
        title="Continue (F5)"
      >
        ▶ Continue <kbd>F5</kbd>
      </button>
      <button
        type="button"
        disabled={!live || state !== 'running'}
        onClick={() => void a.pause()}
        title="Pause after this step"
      >
        ❚❚ Pause
      </button>
      <button
        type="button"
        data-testid="btn-stop"
        disabled={!live}
        onClick={() => void a.stop()}
        title="Stop (Shift+F5)"
      >
        ■ Stop <kbd>⇧F5</kbd>
      </button>
      <label
        className="toggle"
        title="Show each decided action and let you run it, edit it or give its result"
      >
        <input
          type="checkbox"
          data-testid="stop-before-tool"
          checked={stopPoints.before_tool}
          disabled={!live}
          onChange={(e) => void a.setStopPoint('before_tool', e.target.checked)}
        />
        <span className="long">Pause before each tool runs</span>
        <span className="short">Pause before tools</span>
      </label>
      <label className="toggle" title="Show the model's answer before the agent gets it, and let you edit it">
        <input
          type="checkbox"
          data-testid="stop-before-answer"
          checked={stopPoints.before_answer}
          disabled={!live}
          onChange={(e) => void a.setStopPoint('before_answer', e.target.checked)}
        />
        <span className="long">Pause before each answer</span>
        <span className="short">Pause before answers</span>
      </label>
      <span className="sep" />
      {branch ? (
        <span className="where">
          <span className="mono where-task" title={view?.summary.task ?? ''}>
            {view?.summary.task ?? ''}
          </span>{' '}
          · <IdText id={branch} copy testId="episode-id" /> ·{' '}
          <span
            className={`badge st-${live ? (state ?? 'idle') : (view?.summary.status ?? 'open')}`}
            data-testid="episode-state"
          >
            {live ? (state ?? 'idle') : (view?.end?.status ?? view?.summary.status ?? 'recorded')}
          </span>
          {busy ? <span className="muted"> working…</span> : null}
        </span>
      ) : (
        <span className="muted">no episode open</span>
      )}
      <TeachingButtons />
    </div>
  );
}
