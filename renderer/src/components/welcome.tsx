import { useStores } from '../stores/use-stores';
import { OPENABLE } from './projects-section';

/**
 * The timeline with nothing open: what stepbox does, in one sentence, and the three ways in.
 * A first open at 1920×1080 showed a wide empty centre with one line, and a new hire had to
 * guess what the window was for.
 */
export function Welcome() {
  const stores = useStores();
  return (
    <div className="state state-empty welcome" data-state="empty" data-testid="welcome">
      <p>No episode open.</p>
      <p>
        stepbox runs an AI agent in a real sandbox and steps through its episode like code in a debugger:
        pause before a tool runs, inspect each call, inject an observation, roll the sandbox back to any step
        and fork from there.
      </p>
      <p>Where to begin:</p>
      <ul>
        <li>
          <b>A case</b> (library, Cases): a classic failure of agent training, run and walked through.
        </li>
        <li>
          <b>A sample task</b> (library, Sample tasks), with the agent of your choice.
        </li>
        <li>
          <button
            type="button"
            data-testid="welcome-open"
            onClick={() => stores.projects.getState().openDialog()}
          >
            Open…
          </button>{' '}
          {OPENABLE}.
        </li>
      </ul>
      <p className="muted">
        Keys: <kbd>?</kbd> lists them all.
      </p>
    </div>
  );
}
