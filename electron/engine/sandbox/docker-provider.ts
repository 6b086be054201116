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
import { OomEvents } from '../docker/oom.js';
import { ownedContainers, ownerLabel, sweepOrphans } from '../docker/owner.js';
import { logger } from '../log.js';
import { DockerSandbox } from './docker-sandbox.js';
import { SandboxFailure, type SandboxConfig, type SandboxProvider } from './sandbox.js';

import { ensureAgentVolume } from '../docker/agent-volume.js';

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
}

/** Creates sandboxes as Docker containers, each with its helper process. */
export class DockerSandboxProvider implements SandboxProvider {
  readonly backend = 'docker';
  private readonly live = new Map<string, DockerSandbox>();
  private readonly ooms = new OomEvents();

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
  ) {}

  /** Subscribes to the engine's OOM events for stepbox containers. */
  async watch(): Promise<void> {
    await this.ooms.watch(this.engine, `${STEPBOX_LABEL}=1`);
  }

  /** Starts a container for `config` and its helper. Rejects with a {@link SandboxFailure} saying why not. */
  async create(config: SandboxConfig): Promise<DockerSandbox> {
    await checkNetwork(this.engine, config.network);
    const kind = this.info.kind;
    const volume = config.agentFiles
      ? await ensureAgentVolume(this.engine, config.image, config.agentFiles)
      : undefined;
    const id = await this.engine.createAndStart(
      specForEngine(containerSpec(config, ownerLabel(), volume), kind),
    );
    const sandbox = new DockerSandbox(this.engine, id, config, {
      ooms: this.ooms,
      onDestroy: (cid) => {
        this.live.delete(cid);
        this.ooms.forget(cid);
      },
      onKeep: (cid) => this.live.delete(cid),
    });
    sandbox.unenforcedLimits = this.unenforcedLimits;
    this.live.set(id, sandbox);
    try {
      await prepareSandbox(this.engine, id, kind, config.network);
      await sandbox.start();
    } catch (e) {
      await sandbox
        .destroy()
        .catch((d: Error) => log.warn(`cannot remove failed sandbox ${id.slice(0, 12)}: ${d.message}`));
      throw e;
    }
    return sandbox;
  }

  /** Removes stepbox containers whose owner process is gone (never this process's or another live one's). */
  sweepOrphans(): Promise<string[]> {
    return sweepOrphans(this.engine);
  }

  /** Ids of every container this process owns (live or leaked). */
  owned(): Promise<string[]> {
    return ownedContainers(this.engine);
  }

  /** Destroys every sandbox this provider created (except kept ones) and stops listening to the engine. */
  async close(): Promise<void> {
    this.ooms.close();
    const results = await Promise.allSettled([...this.live.values()].map((s) => s.destroy()));
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
  if (options.sweep !== false) {
    const removed = await sweepOrphans(engine);
    if (removed.length) log.info(`removed ${removed.length} orphan sandbox(es)`);
  }
  const provider = new DockerSandboxProvider(engine, info, problem ?? undefined);
  await provider.watch();
  return provider;
}
