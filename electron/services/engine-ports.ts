import { existsSync, readdirSync } from 'node:fs';
import { normalizeAgentSpec } from '../engine/agents/agent-spec.js';
import { readBatchFile } from '../engine/batch/batch-file.js';
import { createBatch, runBatch } from '../engine/batch/batch-runner.js';
import { runEpisodeToEnd } from '../engine/batch/run-episode.js';
import { poolSupply, TaskSandboxes, type SandboxSupply } from '../engine/batch/sandbox-supply.js';
import { runDoctor } from '../engine/doctor.js';
import { logger } from '../engine/log.js';
import { projectRoot } from '../engine/docker/image.js';
import { dockerClient, dockerReachable } from '../engine/docker/ping.js';
import { openStats } from '../engine/docker/stats.js';
import { openTerminal } from '../engine/docker/terminal.js';
import {
  forkEpisode,
  loadTask,
  openBranchController,
  replayVerify,
  startEpisode,
  taskFilePath,
  type SandboxSource,
} from '../engine/harness/index.js';
import { createDockerProvider, type DockerSandboxProvider } from '../engine/sandbox/docker-provider.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import type { SandboxConfig } from '../engine/sandbox/sandbox.js';
import { WarmPool } from '../engine/sandbox/warm-pool.js';
import { openEpisodeStore, stepboxHome, type DiskEpisodeStore } from '../engine/trace/episode-store.js';
import { runWhatIf } from './what-if.js';
import { tryCandidates } from '../engine/candidates/try-candidates.js';
import { stageSandboxes } from '../engine/candidates/staged-sandboxes.js';
import { join } from 'node:path';
import { fileCatalog } from './catalog.js';
import type { BatchPort, DockerPort, DoctorPort, EnginePorts, HarnessPort } from './ports.js';
import { ServiceError } from './service-error.js';
import { storeTracePort } from './trace-port.js';

const log = logger('services');

/** Where the real engine lives: the store home and the bundled resources. */
export interface EngineOptions {
  /** The store home; default `$STEPBOX_HOME` or `~/.stepbox`. */
  readonly home?: string;
  /** The folder holding `tasks/` and `cases/`; default the project's `resources/`. */
  readonly resourcesDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Ready sandboxes the app keeps per sandbox config (`STEPBOX_POOL_SIZE`, default 1; 0: cold starts). */
function poolSize(env: NodeJS.ProcessEnv): number {
  const n = Number(env.STEPBOX_POOL_SIZE ?? 1);
  return Number.isInteger(n) && n >= 0 ? n : 1;
}

/**
 * The Docker sandbox provider and a warm pool over it, created on first use (so web mode
 * starts with Docker down). Live episodes take their sandboxes from the pool (a start is
 * a hand-over, not a container start) and give them back when they are disposed; closing
 * destroys everything the pool holds or lent, then the provider.
 */
function lazySandboxes(env: NodeJS.ProcessEnv) {
  let created: Promise<{ provider: DockerSandboxProvider; pool: WarmPool }> | null = null;
  const get = () => {
    created ??= createDockerProvider().then(
      (provider) => ({ provider, pool: new WarmPool(provider, { size: poolSize(env) }) }),
      (e: unknown) => {
        created = null;
        throw e;
      },
    );
    return created;
  };
  return {
    /** The bare provider (throwaway sandboxes the caller destroys itself). */
    async provider(): Promise<DockerSandboxProvider> {
      return (await get()).provider;
    },
    /** A sandbox source over the warm pool: acquire on create, reset-and-keep on release. */
    async source(): Promise<SandboxSource> {
      const { provider, pool } = await get();
      return {
        provider: { backend: provider.backend, create: (config) => pool.acquire(config) },
        release: (sandbox) => pool.release(sandbox),
      };
    },
    /** Sandboxes handed from one episode of a task to the next without a reset (over the pool). */
    async kept(): Promise<TaskSandboxes> {
      const { pool } = await get();
      return new TaskSandboxes({ acquire: (c) => pool.acquire(c), release: (sb) => pool.release(sb) });
    },
    /** The pool as a batch's supply (recycling between episodes of the same config). */
    async supply(): Promise<SandboxSupply> {
      return poolSupply((await get()).pool);
    },
    /** Starts the pool's sandboxes for a task's config in the background. */
    async prewarm(config: SandboxConfig): Promise<void> {
      await (await get()).pool.prewarm(config);
    },
    async close(): Promise<void> {
      const c = created;
      created = null;
      const both = c ? await c.catch(() => null) : null;
      if (!both) return;
      try {
        await both.pool.close();
      } finally {
        await both.provider.close();
      }
    },
  };
}

/** The harness binding: episodes, fork, reopen, replay and what-if, all on Docker sandboxes. */
function harnessPort(store: DiskEpisodeStore, sandboxes: ReturnType<typeof lazySandboxes>): HarnessPort {
  return {
    async start({ taskPath, agent, breakpoints, agentOptions, leadIn = 0 }) {
      const task = loadTask(taskPath);
      if (!task.ok) throw new ServiceError(task.error.code, task.error.message);
      const source = await sandboxes.source();
      const kept = task.value.sandbox.reset_between_episodes ? null : await sandboxes.kept();
      try {
        // The case runner's loop: earlier episodes run to their end and leave their sandbox
        // as it is for the next (no reset), so the live one starts where they stopped.
        for (let i = 0; kept && i < leadIn; i++)
          await runEpisodeToEnd({
            task: task.value,
            taskPath: taskFilePath(taskPath),
            agentSpec: agent,
            store,
            sandboxes: kept,
          });
        return await startEpisode({
          task: task.value,
          taskPath: taskFilePath(taskPath),
          agentSpec: agent,
          breakpoints,
          provider: kept ? kept.sourceFor(task.value).provider : source.provider,
          release: source.release,
          store,
          agentOptions: {
            ...(agentOptions?.base_url ? { baseUrl: agentOptions.base_url } : {}),
            ...(agentOptions?.temperature !== undefined ? { temperature: agentOptions.temperature } : {}),
            ...(agentOptions?.seed !== undefined ? { seed: agentOptions.seed } : {}),
          },
        });
      } finally {
        await kept?.close();
      }
    },
    prewarm(taskPaths) {
      for (const path of taskPaths) {
        const task = loadTask(path);
        if (!task.ok) continue;
        sandboxes
          .prewarm(sandboxConfig(task.value.sandbox))
          .catch((e: unknown) =>
            log.debug(`no warm sandbox for ${path}: ${e instanceof Error ? e.message : String(e)}`),
          );
      }
    },
    async reopen(id, step, agent) {
      return openBranchController({
        id,
        at: step,
        ...(await sandboxes.source()),
        store,
        ...(agent ? { agentSpec: agent } : {}),
      });
    },
    async fork(id, step, agent) {
      return forkEpisode({
        id,
        at: step,
        ...(await sandboxes.source()),
        store,
        ...(agent ? { agentSpec: agent } : {}),
      });
    },
    async replayVerify(id) {
      const report = await replayVerify({ id, ...(await sandboxes.source()), store });
      const first = report.diff?.[0] ?? null;
      return {
        identical: report.diverged_at === null && report.workspace_diverged_at === null,
        steps_replayed: report.steps.length,
        first_divergence:
          report.diverged_at === null
            ? null
            : {
                step: report.diverged_at,
                call_id: first?.call_id ?? null,
                field: first?.field ?? 'calls',
                recorded: first?.recorded ?? null,
                actual: first?.replayed ?? null,
              },
        workspace_diverged_at: report.workspace_diverged_at,
      };
    },
    async candidates({ id, step, sources, runOn, staged }) {
      return tryCandidates({
        id,
        at: step,
        sources,
        runOn,
        store,
        ...(staged ?? (await sandboxes.source())),
      });
    },
    async stageCandidates(id, step, count) {
      return stageSandboxes({ store, id, at: step, count, source: await sandboxes.source() });
    },
    async whatIf(id, step, call) {
      return runWhatIf(store, await sandboxes.provider(), id, step, call);
    },
  };
}

function dockerPort(env: NodeJS.ProcessEnv): DockerPort {
  return {
    async status() {
      const r = await dockerReachable(dockerClient(), undefined, env);
      return { ok: r.ok, message: r.detail, fix: r.fix || null };
    },
    openTerminal: (containerId, options) => openTerminal(containerId, options),
    openStats: (containerId) => openStats(containerId),
  };
}

function doctorPort(env: NodeJS.ProcessEnv): DoctorPort {
  return {
    async run() {
      const report = await runDoctor(env);
      return {
        ok: report.ok,
        checks: report.checks.map((c) => ({ name: c.id, ok: c.ok, message: c.detail, fix: c.fix || null })),
      };
    },
  };
}

/** Batches under `home/batches/`, on the warm pool. */
function batchPort(store: DiskEpisodeStore, sandboxes: ReturnType<typeof lazySandboxes>): BatchPort {
  const root = join(store.home, 'batches');
  return {
    create({ tasks, agent, episodes, concurrency }) {
      const loaded = tasks.map((path) => {
        const t = loadTask(path);
        if (!t.ok) throw new ServiceError(t.error.code, t.error.message);
        return { path: taskFilePath(path), task: t.value };
      });
      return createBatch({
        home: store.home,
        tasks: loaded,
        agent: normalizeAgentSpec(agent),
        episodes,
        concurrency,
      });
    },
    async run(dir, batch, onProgress, signal) {
      return runBatch({ dir, batch, store, supply: await sandboxes.supply(), onProgress, signal });
    },
    list() {
      if (!existsSync(root)) return [];
      return readdirSync(root).flatMap((name) => {
        const dir = join(root, name);
        try {
          return [{ dir, batch: readBatchFile(dir) }];
        } catch (e) {
          log.debug(`${dir}: not a batch (${e instanceof Error ? e.message : String(e)})`);
          return [];
        }
      });
    },
  };
}

/** Binds the service ports to the real engine (Docker, the disk store, the harness). */
export function engineServicesPorts(options: EngineOptions): EnginePorts {
  const env = options.env ?? process.env;
  const store = openEpisodeStore(options.home ?? stepboxHome(env));
  const sandboxes = lazySandboxes(env);
  return {
    harness: harnessPort(store, sandboxes),
    traces: storeTracePort(store),
    docker: dockerPort(env),
    catalog: fileCatalog(options.resourcesDir ?? join(projectRoot(), 'resources')),
    doctor: doctorPort(env),
    batches: batchPort(store, sandboxes),
    close: () => sandboxes.close(),
  };
}
