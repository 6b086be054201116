import { runDoctor } from '../engine/doctor.js';
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
} from '../engine/harness/index.js';
import { createDockerProvider, type DockerSandboxProvider } from '../engine/sandbox/docker-provider.js';
import { openEpisodeStore, stepboxHome, type DiskEpisodeStore } from '../engine/trace/episode-store.js';
import { runWhatIf } from './what-if.js';
import { join } from 'node:path';
import { fileCatalog } from './catalog.js';
import type { DockerPort, DoctorPort, EnginePorts, HarnessPort } from './ports.js';
import { ServiceError } from './service-error.js';
import { storeTracePort } from './trace-port.js';

/** Where the real engine lives: the store home and the bundled resources. */
export interface EngineOptions {
  /** The store home; default `$STEPBOX_HOME` or `~/.stepbox`. */
  readonly home?: string;
  /** The folder holding `tasks/` and `cases/`; default the project's `resources/`. */
  readonly resourcesDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** The Docker sandbox provider, created on first use (so web mode starts with Docker down). */
function lazyProvider() {
  let provider: Promise<DockerSandboxProvider> | null = null;
  return {
    get(): Promise<DockerSandboxProvider> {
      provider ??= createDockerProvider().catch((e: unknown) => {
        provider = null;
        throw e;
      });
      return provider;
    },
    async close(): Promise<void> {
      const p = provider;
      provider = null;
      if (p) await (await p.catch(() => null))?.close();
    },
  };
}

/** The harness binding: episodes, fork, reopen, replay and what-if, all on Docker sandboxes. */
function harnessPort(store: DiskEpisodeStore, provider: ReturnType<typeof lazyProvider>): HarnessPort {
  return {
    async start({ taskPath, agent, breakpoints, agentOptions }) {
      const task = loadTask(taskPath);
      if (!task.ok) throw new ServiceError(task.error.code, task.error.message);
      return startEpisode({
        task: task.value,
        taskPath: taskFilePath(taskPath),
        agentSpec: agent,
        breakpoints,
        provider: await provider.get(),
        store,
        agentOptions: {
          ...(agentOptions?.base_url ? { baseUrl: agentOptions.base_url } : {}),
          ...(agentOptions?.temperature !== undefined ? { temperature: agentOptions.temperature } : {}),
          ...(agentOptions?.seed !== undefined ? { seed: agentOptions.seed } : {}),
        },
      });
    },
    async reopen(id, step, agent) {
      return openBranchController({
        id,
        at: step,
        provider: await provider.get(),
        store,
        ...(agent ? { agentSpec: agent } : {}),
      });
    },
    async fork(id, step, agent) {
      return forkEpisode({
        id,
        at: step,
        provider: await provider.get(),
        store,
        ...(agent ? { agentSpec: agent } : {}),
      });
    },
    async replayVerify(id) {
      const report = await replayVerify({ id, provider: await provider.get(), store });
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
    async whatIf(id, step, call) {
      return runWhatIf(store, await provider.get(), id, step, call);
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

/** Binds the service ports to the real engine (Docker, the disk store, the harness). */
export function engineServicesPorts(options: EngineOptions): EnginePorts {
  const env = options.env ?? process.env;
  const store = openEpisodeStore(options.home ?? stepboxHome(env));
  const provider = lazyProvider();
  return {
    harness: harnessPort(store, provider),
    traces: storeTracePort(store),
    docker: dockerPort(env),
    catalog: fileCatalog(options.resourcesDir ?? join(projectRoot(), 'resources')),
    doctor: doctorPort(env),
    close: () => provider.close(),
  };
}
