import { dirname, resolve } from 'node:path';
import { DockerEngine, engineAtSocket } from './docker/client.js';
import { inspectSandboxImage, type ImageState } from './docker/image.js';
import { ownedContainers } from './docker/owner.js';
import { dockerReachable, type DockerReachability } from './docker/ping.js';
import { HarnessError } from './harness/harness-error.js';
import type { TaskImages } from './harness/task-images.js';
import type { EpisodeParts } from './episode-parts.js';
import { createAgent } from './agent-factory.js';
import { createToolRegistry } from './tools/registry.js';
import type { EpisodeEnv } from './harness/episode-factory.js';
import { unenforcedLimitsAllowed } from './docker/engine-kind.js';
import { createDockerProvider, helperChannelChoice } from './sandbox/docker-provider.js';
import { buildImage, type BuildImageOptions, type BuildImageResponse } from './sandbox-image.js';
import { runDir } from './stepbox-home.js';
import { spinBudgetMs } from './sandbox/reply-spin.js';
import { coldSupply } from './sandbox/sandbox-supply.js';
import {
  openSandboxStats,
  openSandboxTerminal,
  type SandboxTerminalOptions,
  type StatsStream,
  type Terminal,
} from './sandbox/sandbox-terminal.js';
import type { SandboxConfig, SandboxProvider, SandboxSupply } from './sandbox/sandbox.js';
import { WarmPool } from './sandbox/warm-pool.js';
import { indexClosedBranch, openIndex, type EpisodeIndex } from './trace/episode-index.js';
import { openEpisodeStore, stepboxHome, type DiskEpisodeStore } from './trace/episode-store.js';

/** Options of {@link openEngine}. */
export interface OpenEngineOptions {
  /** The store home; default `$STEPBOX_HOME` (from `env`) or `~/.stepbox`. */
  readonly home?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Ready sandboxes kept per sandbox config; 0 (the default) starts each one cold. */
  readonly pool?: number;
  /** Where sandboxes come from; default Docker, connected on first use (tests pass the memory sandbox). */
  readonly provider?: () => Promise<SandboxProvider>;
  /**
   * Close orphaned traces as `interrupted` on open and remove orphaned containers on connecting
   * (default true; read-only tools that must be fast, or must change nothing, skip both).
   */
  readonly sweep?: boolean;
  /**
   * The Docker engine at this unix socket path instead of the environment's (DOCKER_HOST or
   * the local socket): a second engine beside the main one, such as the bench's gVisor
   * engine (.ci/gvisor.sh). The helpers' channel and reply spin still come from `env`.
   */
  readonly dockerSocket?: string;
}

/** The engine, composed once: what the CLI, the services, the bench and the tests use. */
export interface Engine {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly store: DiskEpisodeStore;
  /**
   * The store at `home` for reading: this engine's own when `home` is its home, else that
   * home's store opened once and left as found (no sweep: another home's open traces are not
   * ours to close). A batch recorded under another $STEPBOX_HOME is read through it.
   */
  storeAt(home: string): DiskEpisodeStore;
  /** How episodes get their tool registry and agents. */
  readonly parts: EpisodeParts;
  /** The SQLite index of the store, opened on first use (the caller refreshes it when it lists). */
  index(): EpisodeIndex;
  /** The bare provider, connected on first use (throwaway sandboxes the caller destroys itself). */
  provider(): Promise<SandboxProvider>;
  /** The one sandbox supply: the warm pool when `pool` > 0, else cold starts. */
  supply(): Promise<SandboxSupply>;
  /** What the harness factories take: the store, the supply and the parts. */
  episodeEnv(): Promise<EpisodeEnv>;
  /** A TTY shell in one of this engine's sandboxes, over the provider's own connection. */
  terminal(sandboxId: string, options: SandboxTerminalOptions): Promise<Terminal>;
  /** The live resource use of one of this engine's sandboxes, over the provider's own connection. */
  /** `taskMemoryBytes`: the task memory limit (see `docker/stats.ts`). */
  stats(sandboxId: string, taskMemoryBytes: number): Promise<StatsStream>;
  /** Starts the pool's sandboxes for a config in the background (no-op without a pool). */
  prewarm(config: SandboxConfig): Promise<void>;
  /**
   * The sandboxes the warm pool holds idle for the next start (ready) or is starting: they
   * run no episode, so a person counting containers hears of them here. Zeros without a pool
   * or before Docker was reached.
   */
  warm(): Promise<{ ready: number; starting: number }>;
  /**
   * Whether the engine's Docker answers (bounded), what it is, and the fix when it does not:
   * asked on the one connection its sandboxes use, so doctor and the window say what the
   * sandboxes will find (no second client made from the environment).
   */
  reachability(): Promise<DockerReachability>;
  /** The sandbox image on that engine: present or not, and its version label. */
  sandboxImage(): Promise<ImageState>;
  /** Builds the sandbox image on that engine (sandbox-image.ts); errors come back as values. */
  buildSandboxImage(options: BuildImageOptions): Promise<BuildImageResponse>;
  /**
   * The engine's one Docker connection itself, for what speaks to the engine beside the
   * sandboxes (the bench's raw-exec and `docker commit` baselines, the runtimes it offers).
   */
  docker(): DockerEngine;
  /**
   * Removes every container this process owns on that engine, tracked or not: after a signal,
   * one whose create was cut short too (`sandbox exec`'s cleanup). Returns how many.
   */
  removeOwned(): Promise<number>;
  /** Destroys what the pool holds or lent, then the provider's connection; closes the index. */
  close(): Promise<void>;
}

/** Ready sandboxes the app keeps per config: `STEPBOX_POOL_SIZE`, default 1; 0 cold starts. */
export function poolSizeFromEnv(env: NodeJS.ProcessEnv): number {
  const n = Number(env.STEPBOX_POOL_SIZE ?? 1);
  return Number.isInteger(n) && n >= 0 ? n : 1;
}

/**
 * The engine's composition root: opens the store (closing orphaned traces), builds the
 * index and the sandbox supply on demand, and the parts each episode's tool registry and
 * agents come from; the harness factories take all three (`episodeEnv()`). Docker is
 * connected on first use, so a window or a read-only command starts with Docker down.
 *
 * ```ts
 * const engine = openEngine({ env: process.env, pool: 2 });
 * const runner = await startEpisode({ task, agentSpec, ...(await engine.episodeEnv()) });
 * await engine.close();
 * ```
 */
export function openEngine(options: OpenEngineOptions = {}): Engine {
  const env = options.env ?? process.env;
  const home = options.home ?? stepboxHome(env);
  let index: EpisodeIndex | null = null;
  let closed = false;
  /** The engine's index, opened on first use (again when a caller closed it: the CLI's commands do). */
  const engineIndex = (at: string) => (index?.isOpen ? index : (index = openIndex(at)));
  const store = openEpisodeStore(home, {
    skipMarkInterrupted: true,
    // Each branch it closes goes into the engine's one index (closed with the engine), not
    // through a connection opened, migrated and checkpointed on close per branch: ~30 ms of
    // every batch episode's end under load, on the event loop.
    onBranchClosed: (s, b) => indexClosedBranch(s, b, closed ? undefined : engineIndex(s.home)),
  });
  if (options.sweep !== false) {
    store.markInterrupted();
  }
  const size = Math.max(0, Math.floor(options.pool ?? 0));
  // The one Docker connection of this engine (DOCKER_HOST or the local socket): the provider's
  // sandboxes, doctor's checks and the image build all go over it. Making it connects nothing.
  let connection: DockerEngine | null = null;
  const docker = () =>
    (connection ??= options.dockerSocket ? engineAtSocket(options.dockerSocket) : new DockerEngine());
  const connect =
    options.provider ??
    (() =>
      createDockerProvider({
        engine: docker(),
        allowUnenforcedLimits: unenforcedLimitsAllowed(env),
        sweep: options.sweep !== false,
        runDir: runDir(home),
        channel: helperChannelChoice(env),
        replySpinMs: spinBudgetMs(env),
      }));
  let sandboxes: Promise<{ provider: SandboxProvider; supply: SandboxSupply }> | null = null;
  const get = () => {
    sandboxes ??= connect().then(
      (provider) => ({
        provider,
        supply: size > 0 ? new WarmPool(provider, { size }) : coldSupply(provider),
      }),
      (e: unknown) => {
        sandboxes = null; // Docker was down: the next call tries again
        throw e;
      },
    );
    return sandboxes;
  };
  const parts = episodeParts(home);
  // A task's Dockerfile is built, and an image the engine lacks pulled, by the engine its
  // sandboxes run on (the provider's connection).
  const images: TaskImages = {
    async resolve(task, taskPath, progress) {
      const provider = (await get()).provider;
      if (!provider.taskImage) {
        if (task.sandbox.build === undefined) return task;
        throw new HarnessError(
          'invalid_task',
          `this task builds its image (sandbox.build), which a ${provider.backend} sandbox cannot; run it on Docker`,
        );
      }
      const baseDir = taskPath ? dirname(resolve(taskPath)) : process.cwd();
      return provider.taskImage(task, baseDir, progress);
    },
  };
  const others = new Map<string, DiskEpisodeStore>();
  return {
    home: store.home,
    env,
    store,
    storeAt(at) {
      const path = resolve(at);
      if (path === store.home) return store;
      let other = others.get(path);
      if (!other) {
        other = openEpisodeStore(path, { skipMarkInterrupted: true });
        others.set(path, other);
      }
      return other;
    },
    parts,
    index: () => engineIndex(store.home),
    provider: async () => (await get()).provider,
    supply: async () => (await get()).supply,
    episodeEnv: async () => ({ store, parts, supply: (await get()).supply, images }),
    terminal: async (sandboxId, terminalOptions) =>
      openSandboxTerminal((await get()).provider, sandboxId, terminalOptions),
    stats: async (sandboxId, taskMemoryBytes) =>
      openSandboxStats((await get()).provider, sandboxId, taskMemoryBytes),
    reachability: () => dockerReachable(docker(), undefined, env),
    sandboxImage: () => inspectSandboxImage(docker().docker),
    buildSandboxImage: (buildOptions) => buildImage(docker(), buildOptions),
    docker,
    async removeOwned() {
      const ids = await ownedContainers(docker());
      for (const id of ids) await docker().remove(id);
      return ids.length;
    },
    async prewarm(config) {
      const { supply } = await get();
      if (supply instanceof WarmPool) await supply.prewarm(config);
    },
    async warm() {
      const supply = sandboxes ? (await sandboxes.catch(() => null))?.supply : null;
      const slots = supply instanceof WarmPool ? supply.stats() : [];
      return {
        ready: slots.reduce((n, s) => n + s.ready, 0),
        starting: slots.reduce((n, s) => n + s.starting, 0),
      };
    },
    async close() {
      closed = true;
      index?.close();
      index = null;
      const current = sandboxes;
      sandboxes = null;
      const both = current ? await current.catch(() => null) : null;
      if (!both) return;
      try {
        await both.supply.close?.();
      } finally {
        await both.provider.close?.();
      }
    },
  };
}

/**
 * The parts every engine uses (composed here, above the folders they come from, so the
 * harness sees only the interface): the built-in and custom tools, the agents of agent-factory.ts (recipes from `home`).
 */
function episodeParts(home?: string): EpisodeParts {
  return {
    tools: (task) => createToolRegistry(task),
    agent: (spec, options) => createAgent(spec, { ...(home !== undefined ? { home } : {}), ...options }),
  };
}
