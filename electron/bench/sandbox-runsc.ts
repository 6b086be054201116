import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../../shared/median.js';
import { Task } from '../../shared/task.js';
import { GVISOR_RUNTIME } from '../engine/docker/runtime.js';
import { DiskSnapshotStore } from '../engine/sandbox/disk-snapshot-store.js';
import { openEngine, type Engine } from '../engine/open-engine.js';
import { defaultSandboxConfig } from '../engine/sandbox/limits.js';
import { WarmPool } from '../engine/sandbox/warm-pool.js';
import { TaskMemory } from '../engine/tools/memory.js';
import { createToolRegistry } from '../engine/tools/registry.js';
import type { BenchValue } from './bench-section.js';
import { callOverhead, figureOf, type CallTiming } from './figure.js';
import { changeFive, coldAndWarm, COMMAND_ALONE, mustRun, POPULATE, timed, timeForks } from './sandbox.js';

/** The engine that offers gVisor when the bench's own does not: `.ci/gvisor.sh`'s second dockerd. */
export const GVISOR_HOST_ENV = 'STEPBOX_GVISOR_HOST';

/** Fewer rounds than on runc: every call on gVisor's ptrace platform costs tens of ms. */
const COLD_RUNS = 5;
const TOOL_CALLS = 40;
const BURST_CALLS = 20;
const SNAPSHOT_RUNS = 5;
const FORK_RUNS = 2;
const FORKS = 10;
const MODEL_PAUSE_MS = 10;

/**
 * An engine that offers runsc: the bench's own when it does, else one opened (openEngine, on
 * the own engine's home) at STEPBOX_GVISOR_HOST; or why there is none.
 */
async function runscEngine(own: Engine): Promise<{ engine: Engine; owned: boolean } | { missing: string }> {
  const ownInfo = await own.docker().info();
  if (ownInfo.runtimes?.names.includes(GVISOR_RUNTIME)) return { engine: own, owned: false };
  const host = process.env[GVISOR_HOST_ENV];
  if (!host)
    return {
      missing: `the engine offers no runtime ${GVISOR_RUNTIME} (it offers ${ownInfo.runtimes?.names.join(', ') ?? 'none it names'}) and ${GVISOR_HOST_ENV} is not set (.ci/gvisor.sh starts an engine with it)`,
    };
  if (!host.startsWith('unix://')) return { missing: `${GVISOR_HOST_ENV}=${host} is not a unix:// socket` };
  const engine = openEngine({ home: own.home, sweep: false, dockerSocket: host.slice('unix://'.length) });
  try {
    await engine.provider();
    if (!(await engine.docker().info()).runtimes?.names.includes(GVISOR_RUNTIME)) {
      await engine.close();
      return { missing: `the engine at ${host} offers no runtime ${GVISOR_RUNTIME}` };
    }
    return { engine, owned: true };
  } catch (e) {
    await engine.close().catch(() => undefined);
    return { missing: `the engine at ${host} cannot start sandboxes: ${(e as Error).message}` };
  }
}

/**
 * The sandbox section's figures on gVisor, keyed as on runc with `_runsc` after them
 * (cold_start_ms_runsc, tool_overhead_ms_runsc, snapshot_ms_runsc, …), measured the same
 * way in fewer rounds; `runsc_missing` says why they are absent. `docker commit` and the
 * forks under load are runc's only (`*_runsc_missing`).
 */
export async function runscFigures(
  own: Engine,
  log: (message: string) => void,
): Promise<Record<string, BenchValue>> {
  const found = await runscEngine(own);
  if ('missing' in found) return { runsc_missing: found.missing };
  const provider = await found.engine.provider();
  const config = { ...defaultSandboxConfig(), runtime: GVISOR_RUNTIME };
  const pool = new WarmPool(provider, { size: 1 });
  const storeDir = await mkdtemp(join(tmpdir(), 'stepbox-bench-runsc-'));
  try {
    log(`runsc: cold start vs warm acquire × ${COLD_RUNS}`);
    const { cold, warm } = await coldAndWarm(pool, provider, config, COLD_RUNS);

    const sandbox = await pool.acquire(config);
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
    const call = () =>
      timed(async () => {
        const { result } = await registry.call('execute_shell', { command: 'true' }, ctx);
        if (!result.ok || result.exit_code !== 0)
          throw new Error(`execute_shell true: ${JSON.stringify(result)}`);
      });
    log(`runsc: execute_shell through the registry × ${TOOL_CALLS} paced, × ${BURST_CALLS} back to back`);
    const alone = await sandbox.exec({ command: COMMAND_ALONE, timeoutMs: 120_000 });
    const tool: number[] = [];
    const paired: CallTiming[] = [];
    for (let i = 0; i < TOOL_CALLS; i++) {
      await new Promise((resolve) => setTimeout(resolve, MODEL_PAUSE_MS));
      const callMs = await call();
      tool.push(callMs);
      paired.push({ callMs, commandMs: (sandbox as { lastCommandMs?: number }).lastCommandMs });
    }
    const burst: number[] = [];
    for (let i = 0; i < BURST_CALLS; i++) burst.push(await call());

    log(`runsc: snapshot/restore × ${SNAPSHOT_RUNS}`);
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
        throw new Error(`runsc: snapshot saw ${info.changed.length} changed paths, expected 5`);
      const back = await store.getManifest(previous);
      restore.push(await timed(() => sandbox.restore(store, back)));
      previous = (await sandbox.snapshot(store)).manifest;
    }
    const session = await sandbox.sessionState();
    await pool.release(sandbox);

    log(`runsc: ${FORKS} branches forked from one snapshot × ${FORK_RUNS}`);
    const forkPool = new WarmPool(provider, { size: FORKS });
    let fork: number[];
    try {
      fork = await timeForks(forkPool, config, store, await store.getManifest(previous), session, FORK_RUNS);
    } finally {
      await forkPool.close();
    }
    const overhead = callOverhead(paired);
    const command = alone.ok && alone.exit_code === 0 ? Number(alone.stdout) : null;
    const out: Record<string, BenchValue> = {
      cold_start_ms_runsc: median(cold),
      warm_acquire_ms_runsc: median(warm),
      tool_call_ms_runsc: median(tool),
      tool_call_burst_ms_runsc: median(burst),
      command_ms_runsc: command,
      tool_overhead_ms_runsc: overhead.value,
      snapshot_ms_runsc: median(snap),
      restore_ms_runsc: median(restore),
      snapshot_first_ms_runsc: first.durationMs,
      fork10_ms_runsc: median(fork),
      warm_vs_cold_ratio_runsc: figureOf(median(warm) > 0 ? median(cold) / median(warm) : null, 'warm 0')
        .value,
      commit_ms_runsc_missing:
        'docker commit is timed on runc only (the layer it commits is the same on either runtime)',
      fork10_loaded_ms_runsc_missing: 'the forks under load are timed on runc only',
    };
    if (overhead.value === null) out.tool_overhead_ms_runsc_missing = overhead.reason;
    if (command === null)
      out.command_ms_runsc_missing = `timing the command alone failed: ${alone.stderr ?? ''}`;
    return out;
  } finally {
    await pool.close();
    if (found.owned) await found.engine.close();
    await rm(storeDir, { recursive: true, force: true });
  }
}
