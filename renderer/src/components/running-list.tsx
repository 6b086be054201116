import { selectRunning, selectRunningCount } from '../stores/episodes/episodes-store';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { selectWarmNote } from '../stores/sandbox/sandbox-store';
import { useSlice, useStores } from '../stores/use-stores';
import { IdText } from './id-text';
import { branchName } from '../model/branch-name';
import { useNow } from '../hooks/use-now';
import { selectLastActive } from '../stores/running/running-store';
import { formatSpan } from '../../../shared/format-span';
import type { BranchSummary } from '../../../shared/contract/models';

/** Below this much left before an idle release, the list says when it comes (and in the warning colour). */
const SAY_RELEASE_WITHIN_MS = 5 * 60_000;

/**
 * A live sandbox's clock: started when, up how long, idle how long (since its last step, tool
 * call or terminal input), and when an idle release is near, in how long. Its own one-second
 * tick renders only this line, never the list or the window.
 */
function RunningTimes({ branch }: { branch: BranchSummary }) {
  const now = useNow();
  const lastActive = useSlice('running', (s) => selectLastActive(s, branch));
  const limit = useSlice('running', (s) => s.idleReleaseMs);
  const idle = Math.max(0, now - lastActive);
  const left = limit === null ? null : limit - idle;
  const soon = limit !== null && left !== null && left <= Math.min(SAY_RELEASE_WITHIN_MS, limit / 3);
  return (
    <>
      <span className="muted running-times" data-testid="running-times">
        since {new Date(branch.created).toTimeString().slice(0, 5)} · up{' '}
        <span data-testid="running-age">{formatSpan(now - branch.created)}</span> · idle{' '}
        <span data-testid="running-idle">{formatSpan(idle)}</span>
      </span>
      {/* A line of its own: at the end of the times it broke after a dangling "·". */}
      {soon ? (
        <span className="warn running-soon" data-testid="running-release-soon">
          released in {formatSpan(Math.max(0, left))} unless it is used
        </span>
      ) : null}
    </>
  );
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
  const stopFailed = useSlice('episodes', (s) => s.stopFailed);
  const current = useSlice('stepper', (s) => s.branch);
  const running = selectRunning(episodes);
  // Null until the library is read: an unread list is not "0 running" (after a reload it said so).
  const count = useSlice('episodes', selectRunningCount);
  const readFailed = useSlice('episodes', (s) => s.allLoad === 'error');
  const warm = useSlice('sandbox', selectWarmNote);
  const idleLimit = useSlice('running', (s) => s.idleReleaseMs);
  const settingsFile = useSlice('running', (s) => s.settingsFile);
  return (
    <section
      className="running"
      data-testid="running-list"
      aria-label={`running sandboxes: ${count ?? (readFailed ? 'unknown' : 'being checked')}`}
    >
      <h3>
        Running (
        <span
          data-testid="running-count"
          data-state={count === null ? (readFailed ? 'error' : 'loading') : 'ready'}
          title={
            count === null
              ? readFailed
                ? 'the library could not be read'
                : 'checking which sandboxes are running…'
              : undefined
          }
        >
          {count ?? (readFailed ? '?' : '…')}
        </span>
        )
      </h3>
      {count === null ? (
        <p className="muted running-none" data-testid="running-unknown">
          {readFailed
            ? 'Not known: the library could not be read (its error is above).'
            : // Not "Reading the library…": beside the bar's "paused" it read as if the open episode
              // were still loading. What is waited for is this list's own answer.
              'Checking which sandboxes are running…'}
        </p>
      ) : running.length === 0 ? (
        <p className="muted running-none">No sandbox is running.</p>
      ) : (
        <ul className="lib-list">
          {running.map((b) => (
            // The whole entry opens its episode, as the Episodes tree does (a click on the times
            // or the id too); its name is the button a keyboard reaches, and the click of its
            // Enter or Space comes here the same way. Stop is a button of its own.
            <li
              key={b.branch}
              className={`running-item${b.branch === current ? ' current' : ''}`}
              data-testid="running-item"
              data-branch={b.branch}
              onClick={() => {
                if (b.branch !== stores.stepper.getState().branch)
                  void stores.stepper.getState().open(b.branch);
              }}
            >
              <div className="running-head">
                <button
                  type="button"
                  className="running-what running-open"
                  data-testid="running-open"
                  title={`open ${b.branch}`}
                  aria-current={b.branch === current ? 'true' : undefined}
                >
                  <span className="lib-task">{b.task}</span>{' '}
                  <span className="muted">
                    {branchName(b, episodes.find((e) => e.episode === b.episode)?.branches)}
                    {b.branch === current ? ' · on screen' : ''}
                  </span>
                </button>
                <button
                  type="button"
                  data-testid="running-stop"
                  {...whyNot(
                    stopping === b.branch && 'Stopping…',
                    `stop ${b.branch} and release its sandbox (its trace is kept)`,
                    `running-why-${b.branch}`,
                  )}
                  aria-label={`stop ${b.task} ${b.branch}`}
                  onClick={(e) => {
                    // Stopped, not opened: the entry's own click is not this button's.
                    e.stopPropagation();
                    void stores.episodes.getState().stopBranch(b.branch);
                  }}
                >
                  {stopping === b.branch ? 'Stopping…' : 'Stop'}
                </button>
              </div>
              <WhySlot id={`running-why-${b.branch}`} />
              {stopFailed?.branch === b.branch ? (
                <div className="state state-error" role="alert" data-testid="running-stop-error">
                  {stopFailed.text}
                </div>
              ) : null}
              {/* The id below, the panel's whole width: beside Stop it had to break or be cut. */}
              <div className="running-id">
                <IdText id={b.branch} />
                <RunningTimes branch={b} />
              </div>
            </li>
          ))}
        </ul>
      )}
      {running.length > 0 && idleLimit !== null ? (
        <p
          className="muted running-rule"
          data-testid="running-rule"
          title={`ui.idle_release${settingsFile ? ` in ${settingsFile}` : ''} sets it (README, "Settings")`}
        >
          A sandbox idle {formatSpan(idleLimit)} is released; its trace is kept to reopen.
        </p>
      ) : null}
      {warm ? (
        <p className="muted running-warm" data-testid="running-warm">
          {warm}
        </p>
      ) : null}
    </section>
  );
}
