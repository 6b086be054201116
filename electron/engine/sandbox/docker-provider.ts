/**
 * Docker sandboxes.
 *
 * Usage:
 * ```ts
 * const provider = await createDockerProvider();          // pings Docker, sweeps orphans
 * const sb = await provider.create(defaultSandboxConfig()); // limits.ts; or sandboxConfig(task.sandbox)
 * const r = await sb.exec({ command: 'echo hi', timeoutMs: 30_000 }); // ~1–3 ms per call
 * const snap = await sb.snapshot(new DiskSnapshotStore(dir));          // or new MemorySnapshotStore()
 * await sb.restore(store, await store.getManifest(snap.manifest));
 * await sb.destroy();
 * await provider.close();                                  // destroys what it still owns
 * ```
 * A warm pool over a provider: `new WarmPool(provider, { size: 2 })`, then
 * `pool.acquire(config)` / `pool.release(sb)` / `pool.close()` (warm-pool.ts).
 *
 * Measured on the 2-core dev VM under load (bench section `sandbox`): cold start ~200–400 ms,
 * warm acquire ~3 ms, `exec('true')` ~2 ms, readFile ~0.4 ms; 1,000 files / 10 MB with 5
 * changed: snapshot ~15–25 ms, restore ~15–27 ms (`verify: 'full'` ~35–60 ms).
 */
import { DockerEngine } from '../docker/client.js';
import { workdirOf } from '../../../shared/workdir.js';
import { DEFAULT_WORKDIR, SANDBOX_IMAGE } from '../../../shared/constants.js';
import { imageSeed } from './image-seed.js';
import type { WorkspaceSeed } from './workspace-seed.js';
import { containerSpec, STEPBOX_LABEL } from '../docker/container-spec.js';
import { prepareSandbox, specForEngine } from '../docker/engine-flavour.js';
import {
  engineName,
  limitsFix,
  limitsProblem,
  unenforcedLimitsAllowed,
  type EngineInfo,
} from '../docker/engine-kind.js';
import { checkNetwork } from '../docker/network.js';
import { specForRuntime } from '../docker/gvisor.js';
import { checkRuntime, effectiveRuntime, runtimeRefused } from '../docker/runtime.js';
import { OomEvents } from '../docker/oom.js';
import { ownedContainers, ownerLabel, sweepOrphans } from '../docker/owner.js';
import { logger } from '../log.js';
import { DockerSandbox } from './docker-sandbox.js';
import { describeChannel, type ChannelOffer } from './helper-channel.js';
import { HelperSockets, type HelperSocket } from './helper-socket.js';
import { spinBudgetMs } from './reply-spin.js';
import { runDir, stepboxHome } from '../stepbox-home.js';
import {
  SandboxFailure,
  type SandboxConfig,
  type SandboxProvider,
  type SandboxTerminalOptions,
} from './sandbox.js';

import { withBuiltImage, type BuildableSandbox, type BuildProgress } from '../docker/build-image.js';
import { ensurePulled, type PullProgress } from '../docker/pull-image.js';
import { openStats, type StatsStream } from '../docker/stats.js';
import { openTerminal, type Terminal } from '../docker/terminal.js';
import { ensureAgentVolume, pruneAgentVolumes, type AgentVolumePrune } from '../docker/agent-volume.js';
import { checkImagePlatform, ensureRuntimeVolume, pruneRuntimeVolumes } from '../docker/runtime-volume.js';
import type { VolumePrune } from '../docker/volume-prune.js';

const log = logger('sandbox');

/** Options of {@link createDockerProvider}. */
export interface DockerProviderOptions {
  /** The engine connection; by default DOCKER_HOST or the local socket. */
  readonly engine?: DockerEngine;
  /** Remove containers whose owner process is gone before the first create (default true). */
  readonly sweep?: boolean;
  /**
   * Start sandboxes even where the engine would not hold their limits (rootless on cgroup
   * v1); each sandbox then says so ({@link DockerSandbox.unenforcedLimits}) and an episode's
   * header records it. Default: `STEPBOX_ALLOW_UNENFORCED_LIMITS=1` in the environment.
   */
  readonly allowUnenforcedLimits?: boolean;
  /**
   * Where the helpers' sockets live (`<runDir>/helpers`, see helper-socket.ts); default
   * `$STEPBOX_HOME/run`.
   */
  readonly runDir?: string;
  /**
   * The helpers' channel: `auto` (the default) offers each helper a unix socket where the
   * engine runs on this machine and falls back to the exec where it cannot be had; `exec`
   * never offers one. Default: `STEPBOX_HELPER_CHANNEL` in the environment, else `auto`.
   */
  readonly channel?: HelperChannelChoice;
  /**
   * How long a tool call may busy-poll its helper's socket for the reply (reply-spin.ts; 0:
   * never). Default: `STEPBOX_HELPER_SPIN_MS` in the environment, else 5 ms.
   */
  readonly replySpinMs?: number;
}

/** How a provider's helpers talk to the host: a socket where it can be had, or always the exec. */
export type HelperChannelChoice = 'auto' | 'exec';

/** The environment variable that picks the helpers' channel (`exec` turns the socket off). */
export const HELPER_CHANNEL_ENV = 'STEPBOX_HELPER_CHANNEL';

/** The helpers' channel the environment asks for ({@link HELPER_CHANNEL_ENV}). */
export function helperChannelChoice(env: NodeJS.ProcessEnv): HelperChannelChoice {
  return env[HELPER_CHANNEL_ENV] === 'exec' ? 'exec' : 'auto';
}

/** An engine's words for a bind mount it cannot make (a path it does not see or may not share). */
const MOUNT_REFUSED = /mount|bind|not shared|no such file|does not exist/i;

/**
 * Why the helpers of `engine` get no socket, or null when they may try one: a socket in a
 * host folder reaches a container only where the engine runs on this machine (reached
 * through a local unix socket); over tcp or ssh the container is elsewhere.
 */
export function socketUnavailable(engine: DockerEngine, choice: HelperChannelChoice): string | null {
  if (choice === 'exec') return `${HELPER_CHANNEL_ENV}=exec`;
  if (process.platform === 'win32') return 'unix sockets do not cross into containers on Windows';
  // docker-modem keeps a path, or a function finding the default socket; tcp and ssh have none.
  const modem = engine.docker.modem as { socketPath?: unknown };
  if (typeof modem.socketPath !== 'string' && typeof modem.socketPath !== 'function')
    return 'the engine is remote (DOCKER_HOST over tcp or ssh): a host socket cannot reach its containers';
  return null;
}

/** Creates sandboxes as Docker containers, each with its helper process. */
export class DockerSandboxProvider implements SandboxProvider {
  readonly backend = 'docker';
  private readonly live = new Map<string, DockerSandbox>();
  private readonly ooms = new OomEvents();
  /** The image's files at a working directory, by image id and path (see {@link seedFor}). */
  private readonly seeds = new Map<string, Promise<WorkspaceSeed | null>>();
  /** Why helpers get no socket (null while they may try one); set for good by the first that cannot use it. */
  private noSocket: string | null;

  /**
   * @param info what the engine is ({@link DockerEngine.info}); Docker with nothing known by default.
   * @param unenforcedLimits why this engine's limits do not hold, when the user allowed that anyway.
   */
  constructor(
    readonly engine: DockerEngine,
    readonly info: EngineInfo = {
      kind: 'docker',
      version: 'unknown',
      apiVersion: 'unknown',
      rootless: null,
      cgroupVersion: null,
    },
    readonly unenforcedLimits?: string,
    /** The helpers' socket folders; none: every helper uses its exec. */
    private readonly sockets?: HelperSockets,
    channel: HelperChannelChoice = 'auto',
    /** How long a tool call may busy-poll its helper's socket for the reply (reply-spin.ts). */
    private readonly replySpinMs = 0,
  ) {
    this.noSocket = sockets ? socketUnavailable(engine, channel) : 'no socket folder was given';
  }

  /** Why this provider's helpers use their exec rather than a socket; null while they get one. */
  get socketProblem(): string | null {
    return this.noSocket;
  }

  /** Subscribes to the engine's OOM events for stepbox containers. */
  async watch(): Promise<void> {
    await this.ooms.watch(this.engine, `${STEPBOX_LABEL}=1`);
  }

  /** Starts a container for `config` and its helper. Rejects with a {@link SandboxFailure} saying why not. */
  async create(config: SandboxConfig): Promise<DockerSandbox> {
    await checkNetwork(this.engine, config.network);
    // Never another runtime in place of the one asked for (gVisor asked, runc started).
    checkRuntime(this.info, config.runtime);
    const kind = this.info.kind;
    await checkImagePlatform(this.engine, config.image);
    const [volume, runtimeVolume] = await Promise.all([
      config.agentFiles ? ensureAgentVolume(this.engine, config.image, config.agentFiles) : undefined,
      ensureRuntimeVolume(this.engine, config.image),
    ]);
    const seed = await this.seedFor(config);
    const { id, offer } = await this.startContainer(config, volume, runtimeVolume).catch((e: unknown) => {
      throw (e instanceof SandboxFailure && runtimeRefused(this.info, config.runtime, e.message)) || e;
    });
    const sandbox = new DockerSandbox(
      this.engine,
      id,
      config,
      {
        ooms: this.ooms,
        onDestroy: (cid) => {
          this.live.delete(cid);
          this.ooms.forget(cid);
        },
        onKeep: (cid) => this.live.delete(cid),
        seed,
        replySpinMs: this.replySpinMs,
      },
      offer,
    );
    sandbox.unenforcedLimits = this.unenforcedLimits;
    sandbox.runtime = effectiveRuntime(this.info, config.runtime);
    this.live.set(id, sandbox);
    try {
      await prepareSandbox(this.engine, id, kind, config.network, workdirOf(config));
      await sandbox.start();
      await sandbox.plantSeed();
    } catch (e) {
      await sandbox
        .destroy()
        .catch((d: Error) => log.warn(`cannot remove failed sandbox ${id.slice(0, 12)}: ${d.message}`));
      throw e;
    }
    // The socket was offered and the helper could not use it (Docker Desktop's VM boundary,
    // SELinux, …): the next sandboxes start on the exec without trying again. Not for a
    // timeout: a host too loaded to answer in time now may well answer the next one.
    if (
      'socket' in offer &&
      sandbox.channel.kind === 'exec' &&
      !/timed out/.test(sandbox.channel.reason) &&
      this.noSocket === null
    ) {
      this.noSocket = sandbox.channel.reason;
      log.info(`${describeChannel(sandbox.channel)}; later sandboxes use their exec too`);
    }
    return sandbox;
  }

  /**
   * The image's own files at the config's working directory (image-seed.ts), read once per
   * image content and working directory for this provider's life.
   */
  private async seedFor(config: SandboxConfig): Promise<WorkspaceSeed | null> {
    const workdir = workdirOf(config);
    // The stepbox image's /workspace is empty by construction: not read.
    if (config.image === SANDBOX_IMAGE && workdir === DEFAULT_WORKDIR) return null;
    const image = await this.engine.imageConfig(config.image);
    if (!image)
      throw new SandboxFailure(
        'image_missing',
        `the image ${config.image} is not in the Docker engine; pull it (docker pull ${config.image}) or build it (a task's sandbox.build does)`,
      );
    const key = `${image.id}|${workdir}`;
    let seed = this.seeds.get(key);
    if (!seed) {
      seed = imageSeed(this.engine, config.image, workdir, config.limits.diskBytes);
      this.seeds.set(key, seed);
      // A failed read is not kept: the next sandbox asks again.
      seed.catch(() => this.seeds.delete(key));
    }
    return seed;
  }

  /**
   * Creates and starts the container, with the helper's socket folder mounted when one can be
   * had. An engine that refuses the mount (a host folder it cannot see: Docker Desktop without
   * file sharing for it, a unix socket forwarded from another machine) gets the container
   * without it, and the provider offers no socket again.
   */
  private async startContainer(
    config: SandboxConfig,
    volume: string | undefined,
    runtimeVolume: string,
  ): Promise<{ id: string; offer: ChannelOffer }> {
    const runtime = effectiveRuntime(this.info, config.runtime);
    const spec = (socketDir?: string) =>
      specForRuntime(
        specForEngine(containerSpec(config, ownerLabel(), volume, socketDir, runtimeVolume), this.info.kind),
        runtime,
      );
    let socket: HelperSocket | undefined;
    if (this.noSocket === null && this.sockets) {
      try {
        socket = await this.sockets.open();
      } catch (e) {
        this.noSocket = `no socket folder could be made (${(e as Error).message})`;
        log.warn(`the helpers use their exec: ${this.noSocket}`);
      }
    }
    if (!socket) return { id: await this.engine.createAndStart(spec()), offer: { reason: this.noSocket! } };
    try {
      return { id: await this.engine.createAndStart(spec(socket.hostDir)), offer: { socket } };
    } catch (e) {
      await socket.close().catch(() => undefined);
      if (!(e instanceof SandboxFailure) || e.code !== 'sandbox_failed' || !MOUNT_REFUSED.test(e.message))
        throw e;
      const id = await this.engine.createAndStart(spec());
      this.noSocket = `the engine refused the socket folder's mount (${e.message})`;
      log.warn(`the helpers use their exec: ${this.noSocket}`);
      return { id, offer: { reason: this.noSocket } };
    }
  }

  /** A TTY shell in one of its containers, over this provider's connection (never a second client). */
  terminal(sandboxId: string, options: SandboxTerminalOptions): Promise<Terminal> {
    return openTerminal(sandboxId, { ...options, docker: this.engine.docker });
  }

  /** The live resource use of one of its containers, over this provider's connection. */
  stats(sandboxId: string, taskMemoryBytes: number): Promise<StatsStream> {
    return openStats(sandboxId, this.engine.docker, taskMemoryBytes);
  }

  /** `task` with its `sandbox.build` built on the engine its sandboxes run on (docker/build-image.ts). */
  async taskImage<T extends { readonly sandbox: BuildableSandbox }>(
    task: T,
    baseDir: string,
    progress: (p: BuildProgress | PullProgress) => void,
  ): Promise<T> {
    const built = await withBuiltImage(this.engine.docker, task, baseDir, progress);
    await ensurePulled(this.engine.docker, built.sandbox.image, progress);
    return built;
  }

  /** Removes stepbox containers whose owner process is gone (never this process's or another live one's). */
  sweepOrphans(): Promise<string[]> {
    return sweepOrphans(this.engine);
  }

  /** Removes the agent volumes no container uses (see {@link pruneAgentVolumes}). */
  pruneAgentVolumes(dryRun: boolean): Promise<AgentVolumePrune> {
    return pruneAgentVolumes(this.engine, dryRun);
  }

  /** Removes the runtime volumes of other stepbox builds no container uses (see {@link pruneRuntimeVolumes}). */
  pruneRuntimeVolumes(dryRun: boolean): Promise<VolumePrune> {
    return pruneRuntimeVolumes(this.engine, dryRun);
  }

  /** Ids of every container this process owns (live or leaked). */
  owned(): Promise<string[]> {
    return ownedContainers(this.engine);
  }

  /** Destroys every sandbox this provider created (except kept ones) and stops listening to the engine. */
  async close(): Promise<void> {
    this.ooms.close();
    const results = await Promise.allSettled([...this.live.values()].map((s) => s.destroy()));
    await this.sockets
      ?.close()
      .catch((e: Error) => log.warn(`cannot remove the helper sockets: ${e.message}`));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length)
      throw new Error(`could not destroy ${failed.length} sandbox(es): ${String(failed[0].reason)}`);
  }
}

/**
 * Connects to Docker or Podman (DOCKER_HOST or the local socket), refuses an engine that would
 * not hold the sandbox's limits unless the user allowed it, sweeps orphans and returns a provider.
 */
export async function createDockerProvider(
  options: DockerProviderOptions = {},
): Promise<DockerSandboxProvider> {
  const engine = options.engine ?? new DockerEngine();
  await engine.ping();
  const info = await engine.info();
  const problem = limitsProblem(info);
  const allowed = options.allowUnenforcedLimits ?? unenforcedLimitsAllowed(process.env);
  if (problem && !allowed)
    throw new SandboxFailure(
      'limits_unenforced',
      `${problem}; stepbox refuses to start sandboxes there`,
      limitsFix(info.kind),
    );
  if (problem) log.warn(`${problem}; starting sandboxes anyway (allowed explicitly)`);
  log.debug(`engine: ${engineName(info.kind)} ${info.version} (API ${info.apiVersion})`);
  const sockets = new HelperSockets(options.runDir ?? runDir(stepboxHome()));
  if (options.sweep !== false) {
    const removed = await sweepOrphans(engine);
    if (removed.length) log.info(`removed ${removed.length} orphan sandbox(es)`);
    const folders = await sockets.sweep();
    if (folders) log.info(`removed ${folders} helper socket folder(s) of processes that are gone`);
  }
  const channel = options.channel ?? helperChannelChoice(process.env);
  const provider = new DockerSandboxProvider(
    engine,
    info,
    problem ?? undefined,
    sockets,
    channel,
    options.replySpinMs ?? spinBudgetMs(process.env),
  );
  await provider.watch();
  return provider;
}
