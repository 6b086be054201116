import { selectStopNotice } from '../stores/stepper/stepper-store';
import { useSlice } from '../stores/use-stores';

/**
 * Why the branch stopped, and what the stepper refused, in full: at the top of the
 * inspector, where a sentence has room to wrap (the toolbar has none at 1024 px).
 */
export function StopNotice() {
  const reason = useSlice('stepper', selectStopNotice);
  // A branch that could not load says so in the timeline, where its rows would be.
  const error = useSlice('stepper', (s) => (s.load === 'error' ? null : s.error));
  if (!reason && !error) return null;
  return (
    <div className="stop-notice" aria-live="polite">
      {reason ? (
        <p className="muted" data-testid="stop-reason" role="status">
          {reason}
        </p>
      ) : null}
      {error ? (
        <p className="bad" role="alert" data-testid="stepper-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
