import type { StatsSample } from '../../../shared/contract/models';
import { Panel, PanelState } from '../components/panel';
import { selectMemoryFraction } from '../stores/sandbox/sandbox-store';
import { useSlice } from '../stores/use-stores';
import { selectWayOn } from '../stores/stepper/stepper-store';
import { ReopenButton } from '../components/reopen-button';
import { DockerFix } from '../components/docker-needed';
import { WhySlot } from '../components/why-lines';
import { useNeedsOtherAgent } from '../components/fork-other-button';
import { AGAIN_FAILS_SEE_REPLAY } from '../stores/stepper/way-on';

const NBSP = '\u00a0';

/**
 * A size with a non-breaking space before its unit, whole GiB where it is one (`1 GiB`, so the
 * limits stay one line in a 1024-wide window), else MiB: "disk 512 ⏎MiB" left the unit alone
 * on the next line. The one place the pane formats sizes.
 */
function size(n: number): string {
  const gib = 1024 * 1024 * 1024;
  if (n >= gib && n % gib === 0) return `${n / gib}${NBSP}GiB`;
  return `${(n / 1024 / 1024).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)}${NBSP}MiB`;
}

/** A count and its word kept on one line (`256 pids`). */
function fact(...words: readonly (string | number)[]): string {
  return words.join(NBSP);
}

/** A sparkline of recent samples (inline SVG). */
function Spark(props: { readonly values: readonly number[]; readonly max: number; readonly label: string }) {
  // One text line high: each metric is one line of the pane (22 px made each row a line and a half).
  const w = 90;
  const h = 12;
  if (props.values.length < 2) return <svg width={w} height={h} aria-label={props.label} />;
  const pts = props.values
    .map(
      (v, i) =>
        `${(i / (props.values.length - 1)) * w},${h - (Math.min(v, props.max) / props.max) * (h - 2) - 1}`,
    )
    .join(' ');
  return (
    <svg width={w} height={h} className="spark" aria-label={props.label}>
      <polyline points={pts} />
    </svg>
  );
}

function Stats(props: {
  readonly stats: StatsSample | null;
  readonly history: readonly StatsSample[];
  readonly memFraction: number | null;
}) {
  const s = props.stats;
  if (!s) return <div className="muted">waiting for the stats stream…</div>;
  return (
    <dl className="facts" data-testid="sandbox-stats">
      <dt>CPU</dt>
      <dd data-testid="sandbox-cpu">
        {s.cpu_percent.toFixed(1)}%{' '}
        <Spark
          values={props.history.map((x) => x.cpu_percent)}
          max={Math.max(100, ...props.history.map((x) => x.cpu_percent))}
          label="cpu"
        />{' '}
        · {s.pids ?? '—'} pids
      </dd>
      <dt>memory</dt>
      {/* The processes' memory against the task's limit (the one the limits line says): the
          cgroup's own limit adds the tmpfs mounts' sizes, and read 16 MiB / 2816 MiB beside 1 GiB. */}
      <dd
        data-testid="sandbox-memory"
        title="Memory the sandbox's processes use (files in its tmpfs mounts count as disk) against the task's memory limit"
      >
        {size(s.memory_bytes)} / {size(s.memory_limit_bytes)}
        {props.memFraction !== null ? ` (${(props.memFraction * 100).toFixed(0)}%)` : ''}{' '}
        <Spark
          values={props.history.map((x) => x.memory_bytes)}
          max={s.memory_limit_bytes || 1}
          label="memory"
        />
      </dd>
    </dl>
  );
}

/** The live sandbox: container, image, limits, state, live CPU/memory; Docker's health when it is down. */
export function SandboxPanel() {
  const docker = useSlice('sandbox', (s) => s.docker);
  const checks = useSlice('sandbox', (s) => s.checks);
  const sandbox = useSlice('sandbox', (s) => s.sandbox);
  const load = useSlice('sandbox', (s) => s.load);
  const error = useSlice('sandbox', (s) => s.error);
  const stats = useSlice('sandbox', (s) => s.stats);
  const history = useSlice('sandbox', (s) => s.history);
  const ended = useSlice('sandbox', (s) => s.streamEnded);
  const memFraction = useSlice('sandbox', selectMemoryFraction);
  const branch = useSlice('stepper', (s) => s.branch);
  const live = useSlice('stepper', (s) => s.live);
  const opened = useSlice('stepper', (s) => s.load === 'ready');
  // An ended branch's way on, in the words every panel uses (way-on.ts).
  const what = useSlice('stepper', (s) => selectWayOn(s).what);
  const other = useNeedsOtherAgent();

  return (
    <Panel
      testId="sandbox-panel"
      title="Sandbox"
      className="sandbox"
      actions={
        <span
          className={`badge ${docker === null ? '' : docker.ok ? 'st-succeeded' : 'st-error'}`}
          data-testid="docker-status"
        >
          {docker === null ? 'docker …' : docker.ok ? 'docker ok' : 'docker down'}
        </span>
      }
    >
      {docker && !docker.ok ? (
        <div className="docker-down" role="alert" data-testid="docker-problem">
          {/* The words first, the errno (ECONNREFUSED) and the socket's address only in the details. */}
          <p className="docker-headline" data-testid="docker-headline">
            {docker.headline ?? 'Docker cannot be used'}: stepbox needs it to start sandboxes.
          </p>
          <DockerFix fix={docker.fix} />
          <details>
            <summary>Details</summary>
            <p className="bad">{docker.message}</p>
          </details>
          {checks
            ?.filter((c) => !c.ok && !c.message.startsWith('not checked') && c.message !== docker.message)
            .map((c) => (
              <p key={c.name} className="check">
                <b>{c.name}</b>: {c.message}
                {c.fix ? (
                  <>
                    {' '}
                    — <code>{c.fix}</code>
                  </>
                ) : null}
              </p>
            ))}
        </div>
      ) : null}
      {error ? <PanelState kind="error">{error}</PanelState> : null}
      {!branch ? <PanelState kind="empty">No episode open: no sandbox.</PanelState> : null}
      {branch && opened && !live ? (
        <div data-testid="sandbox-none">
          <PanelState kind="empty">
            {what}: it has no live sandbox. {other ? AGAIN_FAILS_SEE_REPLAY : 'Reopen it to get one.'}
          </PanelState>
          {/* The recorded agent would fail again: Replay alone says why and offers the fork. */}
          {other ? null : (
            <>
              <ReopenButton branch={branch} testId="sandbox-reopen" whyIn="sandbox-reopen-why" />
              <WhySlot id="sandbox-reopen-why" />
            </>
          )}
        </div>
      ) : null}
      {branch && live && load === 'loading' ? (
        <PanelState kind="loading">Looking up the sandbox…</PanelState>
      ) : null}
      {branch && live && load === 'ready' && !sandbox ? (
        <PanelState kind="empty">
          No live sandbox for this branch (a recorded trace). Fork or reopen it to get one.
        </PanelState>
      ) : null}
      {sandbox && live ? (
        <>
          <dl className="facts" data-testid="sandbox-info">
            {/* Two facts a line where they are short (the pane takes its height from these lines,
                Inject the rest: at 1024×700 its last rows were cut at the window's bottom edge). */}
            <dt>container</dt>
            <dd>
              <span className="mono" data-testid="sandbox-container">
                {sandbox.id.slice(0, 12)}
              </span>{' '}
              ·{' '}
              <span className={sandbox.state === 'running' ? 'good' : 'bad'} data-testid="sandbox-state">
                {sandbox.state}
              </span>
            </dd>
            <dt>image</dt>
            <dd>
              <span className="mono">{sandbox.image}</span> · network {sandbox.network}
            </dd>
            <dt>limits</dt>
            <dd data-testid="sandbox-limits">
              {fact(sandbox.limits.cpus, 'cpu')} · {size(sandbox.limits.memory_bytes)} ·{' '}
              {fact(sandbox.limits.pids, 'pids')} · {fact('disk', size(sandbox.limits.disk_bytes))}
            </dd>
          </dl>
          <Stats stats={stats} history={history} memFraction={memFraction} />
          {ended ? <PanelState kind="error">Stats stream ended: {ended}</PanelState> : null}
        </>
      ) : null}
    </Panel>
  );
}
