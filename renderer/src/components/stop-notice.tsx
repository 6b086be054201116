import { memo } from 'react';
import {
  selectEndNotice,
  selectRollbackDetails,
  selectStopNotice,
  selectVerifierOutput,
} from '../stores/stepper/stepper-store';
import { useSlice } from '../stores/use-stores';

/**
 * Why the branch stopped (or how it ended), and what the stepper refused, in full: at the top of the
 * inspector, where a sentence has room to wrap (the toolbar has none at 1024 px).
 */
// Memoized (no props): the inspector re-renders at every step a slider move passes.
export const StopNotice = memo(function StopNotice() {
  const reason = useSlice('stepper', selectStopNotice);
  // A rollback's how and why, one click away under its short notice (the notice comes first).
  const rollbackDetails = useSlice('stepper', selectRollbackDetails);
  const end = useSlice('stepper', selectEndNotice);
  // The verifier's own words (a failing assertion) under the end that its verdict decided.
  const output = useSlice('stepper', selectVerifierOutput);
  // A branch that could not load says so in the timeline, where its rows would be.
  const error = useSlice('stepper', (s) => (s.load === 'error' ? null : s.error));
  const hint = useSlice('stepper', (s) => s.hint);
  if (!reason && !end && !error && !hint) return null;
  return (
    <div className="stop-notice" aria-live="polite">
      {end ? (
        <p className="muted" data-testid="end-reason">
          {end}
        </p>
      ) : null}
      {end && output ? (
        <details className="verifier-output" data-testid="verifier-output">
          <summary className="muted">Details: what the verifier printed</summary>
          <pre className="mono">{output}</pre>
        </details>
      ) : null}
      {reason ? (
        <p className="muted" data-testid="stop-reason" role="status">
          {reason}
        </p>
      ) : null}
      {reason && rollbackDetails ? (
        <details data-testid="rollback-details">
          <summary className="muted">Details: what the rollback restored</summary>
          <p className="muted">{rollbackDetails}</p>
        </details>
      ) : null}
      {/* Guidance (what to do instead) reads as a hint, not in an error's red. */}
      {hint ? (
        <p className="state hint" role="status" data-testid="stepper-hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="bad" role="alert" data-testid="stepper-error">
          {error}
        </p>
      ) : null}
    </div>
  );
});
