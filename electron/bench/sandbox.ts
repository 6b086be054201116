import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Task } from '../../shared/task.js';
import { median } from '../../shared/median.js';
import { commitContainer, rawExec, removeImage, startLayerContainer } from '../engine/docker/baseline.js';
import { DiskSnapshotStore } from '../engine/sandbox/disk-snapshot-store.js';
import { openEngine, type Engine } from '../engine/open-engine.js';
import { HELPER_CHANNEL_ENV } from '../engine/sandbox/docker-provider.js';
import { defaultSandboxConfig } from '../engine/sandbox/limits.js';
import type { Sandbox, SandboxConfig, SandboxProvider, SessionState } from '../engine/sandbox/sandbox.js';
import type { SnapshotManifest } from '../engine/sandbox/snapshot-store.js';
import {
  cpuMark,
  cpuWindowSince,
  HELPER_SPIN_ENV,
  machineIdle,
  type CpuWindow,
} from '../engine/sandbox/reply-spin.js';
import { spinCounts } from '../engine/sandbox/helper-client.js';
import { WarmPool } from '../engine/sandbox/warm-pool.js';
import { TaskMemory } from '../engine/tools/memory.js';
import { createToolRegistry } from '../engine/tools/registry.js';
import { startBackgroundEpisodes } from './background-episodes.js';
import type { BenchSection } from './bench-section.js';
import { dockerPrerequisite } from './docker-prerequisite.js';
import { callOverhead, figureOf, targetMet, type CallTiming, type Figure } from './figure.js';
import { runscFigures } from './sandbox-runsc.js';

const COLD_RUNS = 9;
/** Raw execs and tool calls alternate in blocks: ROUNDS × (RAW_PER_ROUND execs, then TOOL_PER_ROUND calls). */
const ROUNDS = 5;
const RAW_PER_ROUND = 3;
const TOOL_PER_ROUND = 20;
/**
 * The pause before each timed tool call, standing in for the model's answer that comes
 * between two calls of an episode (hundreds of ms in practice): the shell for the next call
 * is started in it. Calls back to back, with no pause, are timed too (`tool_call_burst_ms`):
 * then each call also pays, in CPU, the start of the shell for a later one.
 */
const MODEL_PAUSE_MS = 10;
/**
 * The same paced call after a pause as long as a model's answer really takes
 * (`tool_overhead_long_pause_ms`): 10 ms flatters. On the 2-vCPU dev VM, medians of
 * interleaved runs: ~0.56 ms over the command at a 10 ms pause, ~0.8 at 20-100 ms, ~0.9-1.15
 * at 300 ms, the spin making no difference there; both processes wake from a longer idle
 * slower, and their code then runs colder. Reported beside the target, never instead of it.
 */
const LONG_PAUSE_MS = 300;
const LONG_PAUSE_CALLS = 15;
const SNAPSHOT_RUNS = 7;
const COMMIT_RUNS = 3;
/** Branches forked at once from one snapshot (`fork10_ms`), and how many times. */
const FORKS = 10;
const FORK_RUNS = 3;

/**
 * What the command of a tool call costs by itself in the sandbox: `bash -c true` started
 * and waited for by a process already running there (a tool call runs its command in a
 * fresh shell, so `$$` is its own). The median of 50, in ms, printed by python3.
 */
export const COMMAND_ALONE = `python3 - <<'EOF'
import os, time
t = []
for _ in range(50):
    t0 = time.monotonic()
    os.waitpid(os.posix_spawn('/bin/bash', ['bash', '-c', 'true'], os.environ), 0)
    t.append((time.monotonic() - t0) * 1000)
print(sorted(t)[25])
EOF`;

/** The workspace both sides of the snapshot/commit comparison hold: 1,000 files of 10 KiB (10 MB) in 20 dirs. */
const FILES = 1000;
export const POPULATE = `
import os
for i in range(${FILES}):
    d = '/workspace/d%d' % (i % 20)
    os.makedirs(d, exist_ok=True)
    with open('%s/f%d.bin' % (d, i), 'wb') as f:
        f.write(os.urandom(10240))
`;

/** A shell command that rewrites 5 of the files (a different 5 each round). */
export function changeFive(round: number): string {
  const files = [0, 1, 2, 3, 4].map((j) => (round * 5 + j * 197) % FILES);
  return files.map((k) => `head -c 10240 /dev/urandom > /workspace/d${k % 20}/f${k}.bin`).join(' && ');
}

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function mustRun(sandbox: Sandbox, command: string): Promise<void> {
  const r = await sandbox.exec({ command, timeoutMs: 60_000 });
  if (!r.ok || r.exit_code !== 0)
    throw new Error(
      `\`${command.slice(0, 60)}\` failed: ${r.error?.message ?? `exit ${r.exit_code}: ${r.stderr}`}`,
    );
}

/**
 * FORK_RUNS times: `FORKS` branches from one snapshot at once, each a pooled sandbox with the
 * workspace restored (verified) and the session set; the ms of each run.
 */
export async function timeForks(
  forkPool: WarmPool,
  config: ReturnType<typeof defaultSandboxConfig>,
  store: DiskSnapshotStore,
  manifest: SnapshotManifest,
  session: SessionState,
  times = FORK_RUNS,
): Promise<number[]> {
  const runs: number[] = [];
  for (let i = 0; i < times; i++) {
    await forkPool.prewarm(config);
    let branches: Sandbox[] = [];
    // As a fork does (episode-factory, staged-sandboxes): the pool refills once the
    // branches are ready, not while they restore.
    const resume = forkPool.holdRefills();
    runs.push(
      await timed(async () => {
        branches = await Promise.all(
          Array.from({ length: FORKS }, async () => {
            const branch = await forkPool.acquire(config);
            await branch.restore(store, manifest);
            await branch.setSessionState(session);
            return branch;
          }),
        ).finally(resume);
      }),
    );
    await Promise.all(branches.map((b) => forkPool.release(b)));
  }
  return runs;
}

/** Episodes running beside the loaded fork measurement (`fork10_loaded_ms`). */
const LOAD_EPISODES = 2;

/**
 * Runs `measure` while LOAD_EPISODES real episodes run beside it (the one set-up the ui
 * section uses too: {@link startBackgroundEpisodes}); they are stopped after. Throws when
 * they cannot run or did not step while `measure` ran: the figure would not be under load.
 */
async function besideEpisodes<T>(measure: () => Promise<T>, log: (message: string) => void): Promise<T> {
  const load = await startBackgroundEpisodes(LOAD_EPISODES, log);
  if ('missing' in load) throw new Error(load.missing);
  try {
    const before = load.steps();
    const out = await measure();
    const after = load.steps();
    if (after.some((n, i) => n <= (before[i] ?? 0)))
      throw new Error(
        'an episode beside the forks took no step while they were timed: the figure would not be under load',
      );
    return out;
  } finally {
    await load.stop();
  }
}

/** The helper's own time for the command of a sandbox's last call (the Docker sandbox keeps it), if any. */
function lastCommandMs(sandbox: Sandbox): number | undefined {
  return (sandbox as { lastCommandMs?: number }).lastCommandMs;
}

/** The others' and this process's share of all CPUs over the paced calls (percent, weighted by time). */
function pacedCpuFigures(
  windows: readonly { window: CpuWindow; ms: number }[],
): Record<string, number | null> {
  const ms = windows.reduce((a, w) => a + w.ms, 0);
  if (ms <= 0) return { paced_others_cpu_pct: null, paced_self_cpu_pct: null };
  const mean = (f: (w: CpuWindow) => number) => windows.reduce((a, w) => a + f(w.window) * w.ms, 0) / ms;
  const pct = (v: number) => Math.round(v * 1000) / 10;
  return {
    paced_others_cpu_pct: pct(mean((w) => Math.max(0, w.busyShare - w.selfShare))),
    paced_self_cpu_pct: pct(mean((w) => w.selfShare)),
  };
}

/** What a paced call's reply spin did. */
type SpinOutcome = 'caught' | 'missed' | 'not_alone' | 'backed_off' | 'busy' | 'none';

function spinOutcomeSince(before: typeof spinCounts): SpinOutcome {
  if (spinCounts.caught > before.caught) return 'caught';
  if (spinCounts.spun > before.spun) return 'missed';
  if (spinCounts.notAlone > before.notAlone) return 'not_alone';
  if (spinCounts.backedOff > before.backedOff) return 'backed_off';
  if (spinCounts.busy > before.busy) return 'busy';
  return 'none';
}

function spinOutcomeFigures(
  outcomes: readonly SpinOutcome[],
  calls: readonly CallTiming[],
): Record<string, number | null> {
  const share = (o: SpinOutcome) =>
    outcomes.length
      ? Math.round((outcomes.filter((x) => x === o).length / outcomes.length) * 100) / 100
      : null;
  const caught = callOverhead(calls.filter((_, i) => outcomes[i] === 'caught'));
  const notCaught = callOverhead(calls.filter((_, i) => outcomes[i] !== 'caught'));
  return {
    reply_spin_caught_share: share('caught'),
    reply_spin_missed_share: share('missed'),
    reply_spin_skipped_share: outcomes.length
      ? Math.round((1 - (share('caught') ?? 0) - (share('missed') ?? 0)) * 100) / 100
      : null,
    tool_overhead_spin_caught_ms: caught.value,
    tool_overhead_spin_not_caught_ms: notCaught.value,
  };
}

/** Section `sandbox`: cold vs warm start, raw exec vs tool call, docker commit vs snapshot/restore. */
export const section: BenchSection = {
  name: 'sandbox',

  prerequisite: dockerPrerequisite,

  async run(log) {
    const config = defaultSandboxConfig();
    // The bench's engines are composed as the app's are (openEngine), on a throwaway home.
    const home = await mkdtemp(join(tmpdir(), 'stepbox-bench-home-'));
    const engine = openEngine({ home });
    const provider = await engine.provider();
    const docker = engine.docker();
    const pool = new WarmPool(provider, { size: 1 });
    const storeDir = await mkdtemp(join(tmpdir(), 'stepbox-bench-'));
    let layerContainer: string | undefined;
    let execEngine: Engine | undefined;
    let quietEngine: Engine | undefined;
    try {
      // Each pair is measured interleaved, round by round, so both sides of a ratio see
      // the same machine load (the bench shares 2 cores with whatever else runs).
      log(`cold start vs warm acquire × ${COLD_RUNS}`);
      const { cold, warm } = await coldAndWarm(pool, provider, config, COLD_RUNS);

      const sandbox = await pool.acquire(config);
      // A/B: a sandbox whose helper speaks over its docker exec (where no socket can be had:
      // a remote engine, Docker Desktop), timed call for call beside the one in use.
      execEngine = openEngine({ home, sweep: false, env: { ...process.env, [HELPER_CHANNEL_ENV]: 'exec' } });
      const viaExec = await (await execEngine.provider()).create(config);
      // A/B: the same socket channel with no busy-polling for the reply (reply-spin.ts), timed
      // call for call beside the one in use: what the spin gains, and whether it ran at all
      // (it does only on a machine with a core to spare).
      quietEngine = openEngine({ home, sweep: false, env: { ...process.env, [HELPER_SPIN_ENV]: '0' } });
      const noSpin = await (await quietEngine.provider()).create(config);
      const task = Task.parse({ name: 'bench', goal: 'bench', tools: ['execute_shell'] });
      const registry = createToolRegistry(task);
      const ctx = {
        sandbox,
        memory: new TaskMemory(),
        task,
        hardTimeoutMs: task.timeouts.step_hard * 1000,
        step: 1,
        callIndex: 0,
      };
      const execCtx = { ...ctx, sandbox: viaExec };
      const noSpinCtx = { ...ctx, sandbox: noSpin };
      log(
        `raw docker exec × ${ROUNDS * RAW_PER_ROUND} vs execute_shell through the registry × ${ROUNDS * TOOL_PER_ROUND}`,
      );
      const raw: number[] = [];
      const tool: number[] = [];
      /** The paced calls again, each with its command's own time in the sandbox (the same call). */
      const paired: CallTiming[] = [];
      /** The same paced calls on the exec-channel sandbox, alternating with them. */
      const execTool: number[] = [];
      const execPaired: CallTiming[] = [];
      /** The same paced calls on the socket sandbox that never spins, alternating with them. */
      const noSpinPaired: CallTiming[] = [];
      const burst: number[] = [];
      const alone: number[] = [];
      /** What each paced call's reply spin did (helper-client.ts spinCounts). */
      const spinOutcome: SpinOutcome[] = [];
      /** Whether the spin could run (reply-spin.ts machineIdle) as each paced call was made. */
      const spinAllowed: boolean[] = [];
      /** The machine's CPU use over each round's paced calls, and their wall time (what the spin gate saw). */
      const pacedCpu: { window: CpuWindow; ms: number }[] = [];
      const call = (on = ctx) =>
        timed(async () => {
          const { result } = await registry.call('execute_shell', { command: 'true' }, on);
          if (!result.ok || result.exit_code !== 0)
            throw new Error(`execute_shell true: ${JSON.stringify(result)}`);
        });
      for (let i = 0; i < ROUNDS; i++) {
        const r = await sandbox.exec({ command: COMMAND_ALONE, timeoutMs: 60_000 });
        if (!r.ok || r.exit_code !== 0) throw new Error(`timing the command alone failed: ${r.stderr}`);
        alone.push(Number(r.stdout));
        for (let j = 0; j < RAW_PER_ROUND; j++) {
          raw.push(
            await timed(async () => {
              const code = await rawExec(docker, sandbox.id, ['true']);
              if (code !== 0) throw new Error(`docker exec of true exited ${code}`);
            }),
          );
        }
        const pacedFrom = cpuMark();
        for (let j = 0; j < TOOL_PER_ROUND; j++) {
          // As in an episode, where the model's answer comes between two calls (not timed).
          await new Promise((resolve) => setTimeout(resolve, MODEL_PAUSE_MS));
          spinAllowed.push(machineIdle());
          const before = { ...spinCounts };
          const callMs = await call();
          spinOutcome.push(spinOutcomeSince(before));
          tool.push(callMs);
          paired.push({ callMs, commandMs: lastCommandMs(sandbox) });
          await new Promise((resolve) => setTimeout(resolve, MODEL_PAUSE_MS));
          noSpinPaired.push({ callMs: await call(noSpinCtx), commandMs: lastCommandMs(noSpin) });
        }
        const pacedTo = cpuMark();
        const window = cpuWindowSince(pacedFrom, pacedTo);
        if (window) pacedCpu.push({ window, ms: pacedTo.at - pacedFrom.at });
        for (let j = 0; j < TOOL_PER_ROUND; j++) burst.push(await call());
      }
      // The exec channel's calls in a loop of their own, after every round: each is a `docker
      // exec` (runc, the engine's relay: tens of ms of other processes' CPU). Between the
      // socket's calls they made the machine look busy to the spin's gate (others' CPU 53-56 %
      // of the two cores), which an episode, one sandbox calling, never sees; and in each
      // round after them, the gate's next window (back to its last read, before them) still
      // held them: about half the next round's paced calls could not spin.
      for (let j = 0; j < ROUNDS * TOOL_PER_ROUND; j++) {
        await new Promise((resolve) => setTimeout(resolve, MODEL_PAUSE_MS));
        const execMs = await call(execCtx);
        execTool.push(execMs);
        execPaired.push({ callMs: execMs, commandMs: lastCommandMs(viaExec) });
      }
      const longPaused: CallTiming[] = [];
      for (let j = 0; j < LONG_PAUSE_CALLS; j++) {
        await new Promise((resolve) => setTimeout(resolve, LONG_PAUSE_MS));
        const callMs = await timed(async () => {
          await registry.call('execute_shell', { command: 'true' }, ctx);
        });
        longPaused.push({ callMs, commandMs: lastCommandMs(sandbox) });
      }

      log(`snapshot/restore of ${FILES} files × ${SNAPSHOT_RUNS}`);
      await mustRun(sandbox, `python3 - <<'EOF'\n${POPULATE}\nEOF`);
      const store = new DiskSnapshotStore(storeDir);
      const first = await sandbox.snapshot(store);
      let previous = first.manifest;
      const snap: number[] = [];
      const restore: number[] = [];
      for (let i = 0; i < SNAPSHOT_RUNS; i++) {
        await mustRun(sandbox, changeFive(i));
        const t0 = performance.now();
        const info = await sandbox.snapshot(store);
        snap.push(performance.now() - t0);
        if (info.changed.length !== 5)
          throw new Error(`snapshot saw ${info.changed.length} changed paths, expected 5`);
        const back = await store.getManifest(previous);
        restore.push(await timed(() => sandbox.restore(store, back)));
        previous = (await sandbox.snapshot(store)).manifest;
      }
      const session = await sandbox.sessionState();
      const channel = sandbox.channel;
      await pool.release(sandbox);
      await viaExec.destroy();
      await noSpin.destroy();

      // Ten branches forked from that step: each a warm sandbox with the step's workspace
      // restored (verified) and its session set, ready for its next step. Once on a quiet
      // machine, once with two real episodes running beside it (`fork10_loaded_ms`).
      log(`${FORKS} branches forked from one snapshot × ${FORK_RUNS}`);
      const forkPool = new WarmPool(provider, { size: FORKS });
      let fork: number[];
      let forkLoaded: number[];
      try {
        const manifest = await store.getManifest(previous);
        const forkTen = () => timeForks(forkPool, config, store, manifest, session);
        fork = await forkTen();
        log(`${FORKS} branches forked × ${FORK_RUNS} while ${LOAD_EPISODES} episodes run beside them`);
        forkLoaded = await besideEpisodes(forkTen, log);
      } finally {
        await forkPool.close();
      }

      log(`docker commit of the same workspace in a writable layer × ${COMMIT_RUNS}`);
      layerContainer = await startLayerContainer(docker, config.image);
      const populated = await rawExec(docker, layerContainer, ['python3', '-c', POPULATE]);
      if (populated !== 0) throw new Error(`populating the layer container exited ${populated}`);
      const commit: number[] = [];
      for (let i = 0; i < COMMIT_RUNS; i++) {
        await rawExec(docker, layerContainer, ['sh', '-c', changeFive(i)]);
        const t0 = performance.now();
        const imageId = await commitContainer(docker, layerContainer);
        commit.push(performance.now() - t0);
        await removeImage(docker, imageId);
      }

      const m = {
        cold_start_ms: median(cold),
        warm_acquire_ms: median(warm),
        raw_exec_ms: median(raw),
        tool_call_ms: median(tool),
        tool_call_burst_ms: median(burst),
        command_ms: median(alone),
        commit_ms: median(commit),
        snapshot_ms: median(snap),
        restore_ms: median(restore),
        fork10_ms: median(fork),
        fork10_loaded_ms: median(forkLoaded),
      };
      // What a tool call adds over its own command: host time minus the sandbox's time of the
      // command, per call, from the same calls (never two medians of different samples, and
      // never clamped: a figure that cannot be had is null with its reason).
      const toolOverhead = callOverhead(paired);
      const execOverhead = callOverhead(execPaired);
      const noSpinOverhead = callOverhead(noSpinPaired);
      const longPauseOverhead = callOverhead(longPaused);
      const ratio = (a: number, b: number, what: string): Figure =>
        figureOf(b > 0 ? a / b : null, `${what}: the denominator measured 0`);
      const warmRatio = ratio(m.cold_start_ms, m.warm_acquire_ms, 'warm_vs_cold_ratio');
      const toolRatio = ratio(m.raw_exec_ms, m.tool_call_ms, 'tool_vs_raw_ratio');
      const snapshotRatio = ratio(m.commit_ms, m.snapshot_ms, 'snapshot_vs_commit_ratio');
      const reasons = Object.fromEntries(
        (
          [
            ['warm_vs_cold_ratio', warmRatio],
            ['tool_vs_raw_ratio', toolRatio],
            ['snapshot_vs_commit_ratio', snapshotRatio],
            ['tool_overhead_ms', toolOverhead],
            ['tool_overhead_exec_ms', execOverhead],
            ['tool_overhead_nospin_ms', noSpinOverhead],
            ['tool_overhead_long_pause_ms', longPauseOverhead],
          ] as const
        ).flatMap(([key, f]) => (f.value === null ? [[`${key}_missing`, f.reason]] : [])),
      );
      return {
        ...m,
        warm_vs_cold_ratio: warmRatio.value,
        tool_vs_raw_ratio: toolRatio.value,
        snapshot_vs_commit_ratio: snapshotRatio.value,
        tool_overhead_ms: toolOverhead.value,
        // Which channel the figures above went over, and the exec channel beside it.
        helper_channel: channel?.kind ?? null,
        ...(channel?.kind === 'exec' ? { helper_channel_reason: channel.reason } : {}),
        tool_call_exec_ms: median(execTool),
        tool_overhead_exec_ms: execOverhead.value,
        // The socket channel without the reply spin, beside it (reply-spin.ts), and whether the
        // spin could run here for most of the paced calls (a core's worth of idle CPU over the
        // last second as each was made).
        tool_overhead_nospin_ms: noSpinOverhead.value,
        // The same call after LONG_PAUSE_MS, as an episode's model pauses (not a target: what it pays).
        tool_overhead_long_pause_ms: longPauseOverhead.value,
        reply_spin_allowed: spinAllowed.filter(Boolean).length * 2 > spinAllowed.length,
        // What the spin did on the paced calls: caught the reply, ran out, or did not run (another
        // request in flight, backing off after misses, the machine busy), in shares of the calls;
        // and the overhead of the calls it caught alone (what the spin gives where it runs).
        ...spinOutcomeFigures(spinOutcome, paired),
        // What the spin gate weighs, over the paced calls: the CPU of every other process (the
        // sandboxes' shells and helpers, dockerd, anything else on the machine) and this one's.
        ...pacedCpuFigures(pacedCpu),
        ...reasons,
        snapshot_first_ms: first.durationMs,
        snapshot_first_bytes: first.bytes,
        warm_target_met: targetMet(warmRatio, (v) => v >= 20),
        tool_target_met: targetMet(toolRatio, (v) => v >= 20),
        snapshot_target_met: targetMet(snapshotRatio, (v) => v >= 10),
        restore_target_met: targetMet(figureOf(m.restore_ms, 'no restore'), (v) => v <= 10),
        tool_overhead_target_met: targetMet(toolOverhead, (v) => v <= 0.5),
        snapshot_change_target_met: targetMet(figureOf(m.snapshot_ms, 'no snapshot'), (v) => v <= 10),
        fork10_target_met: targetMet(figureOf(m.fork10_ms, 'no fork'), (v) => v <= 250),
        fork10_loaded_target_met: targetMet(figureOf(m.fork10_loaded_ms, 'no fork'), (v) => v <= 1000),
        // The same figures on gVisor, side by side (`*_runsc`), or why they are absent.
        ...(await runscFigures(engine, log)),
      };
    } finally {
      if (layerContainer) await docker.remove(layerContainer);
      await pool.close();
      await engine.close();
      await execEngine?.close();
      await quietEngine?.close();
      await rm(storeDir, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  },
};

/**
 * `runs` rounds of a warm acquire from `pool` beside a cold start from `provider`, each up to
 * its first `true`, interleaved so both see the same machine load; the pool refills between.
 */
export async function coldAndWarm(
  pool: WarmPool,
  provider: SandboxProvider,
  config: SandboxConfig,
  runs: number,
): Promise<{ cold: number[]; warm: number[] }> {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    await pool.prewarm(config);
    let leased: Sandbox | undefined;
    warm.push(
      await timed(async () => {
        leased = await pool.acquire(config);
        await mustRun(leased, 'true');
      }),
    );
    if (leased) await pool.release(leased);
    // Let the pool's background refill finish, so it does not slow the cold start down.
    await pool.prewarm(config);
    let fresh: Sandbox | undefined;
    cold.push(
      await timed(async () => {
        fresh = await provider.create(config);
        await mustRun(fresh, 'true');
      }),
    );
    await fresh?.destroy();
  }
  return { cold, warm };
}
