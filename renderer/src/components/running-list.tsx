import { selectRunning } from '../stores/episodes/episodes-store';
import { whyNot } from './why-not';
import { selectWarmNote } from '../stores/sandbox/sandbox-store';
import { useSlice, useStores } from '../stores/use-stores';
import { IdText } from './id-text';
import { branchName } from '../model/branch-name';

/** How long ago `t` (epoch ms) was, in a short phrase: `since 14:02 (3 min)`. */
function since(t: number, now: number): string {
  const clock = new Date(t).toTimeString().slice(0, 5);
  const min = Math.max(0, Math.round((now - t) / 60_000));
  return `since ${clock} (${min < 1 ? 'just now' : min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`})`;
}

/**
 * "Running (n)": every live sandbox, what it is (task, branch, fork or main), since when,
 * and a Stop for each, so none runs out of sight. Empty, it says nothing runs.
 */
export function RunningList() {
  const stores = useStores();
  // Live sandboxes whatever the library search: a filter never hides one running.
  const episodes = useSlice('episodes', (s) => s.allEpisodes);
  const stopping = useSlice('episodes', (s) => s.stopping);
  const current = useSlice('stepper', (s) => s.branch);
  const running = selectRunning(episodes);
  const warm = useSlice('sandbox', selectWarmNote);
  const now = Date.now();
  return (
    <section
      className="running"
      data-testid="running-list"
      aria-label={`running sandboxes: ${running.length}`}
    >
      <h3>
        Running (<span data-testid="running-count">{running.length}</span>)
      </h3>
      {running.length === 0 ? (
        <p className="muted running-none">No sandbox is running.</p>
      ) : (
        <ul className="lib-list">
          {running.map((b) => (
            <li key={b.branch} className="running-item" data-testid="running-item" data-branch={b.branch}>
              <div className="running-head">
                <span className="running-what">
                  <span className="lib-task">{b.task}</span>{' '}
                  <span className="muted">
                    {branchName(b)}
                    {b.branch === current ? ' · on screen' : ''}
                  </span>
                </span>
                <button
                  type="button"
                  data-testid="running-stop"
                  {...whyNot(stopping === b.branch && 'Stopping…')}
                  title={`stop ${b.branch} and release its sandbox (its trace is kept)`}
                  aria-label={`stop ${b.task} ${b.branch}`}
                  onClick={() => void stores.episodes.getState().stopBranch(b.branch)}
                >
                  {stopping === b.branch ? 'Stopping…' : 'Stop'}
                </button>
              </div>
              {/* The id below, the panel's whole width: beside Stop it had to break or be cut. */}
              <div className="running-id">
                <IdText id={b.branch} />
                <span className="muted">{since(b.created, now)}</span>
              </div>
            </li>
          ))}
        </ul>
      )}
      {warm ? (
        <p className="muted running-warm" data-testid="running-warm">
          {warm}
        </p>
      ) : null}
    </section>
  );
}
