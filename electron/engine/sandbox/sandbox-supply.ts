import type { Task } from '../../../shared/task.js';
import { logger } from '../log.js';
import { configKey, sandboxConfig } from './limits.js';
import type { Sandbox, SandboxConfig, SandboxProvider, SandboxSupply } from './sandbox.js';

const log = logger('sandbox');

export type { SandboxSupply } from './sandbox.js';

/**
 * The warm pool as a batch's supply, recycling: the first sandboxes come warm from the
 * pool; a released one is reset (a few ms) and handed straight to the next episode of
 * the same config, instead of going back to a full pool that would destroy it while
 * cold-starting a replacement in the background. Steady state: one reset per episode.
 * `close` returns the recycled sandboxes to the pool.
 *
 * The pool's background refill is held from the first acquire until `close`: every sandbox
 * taken comes back at `close`, so a replacement started meanwhile would only be destroyed
 * then (a full pool), after taking a container start's CPU from the batch's episodes (two
 * starts and two removals per bench batch of 12, ~1/3 of its time on 2 cores).
 */
export function poolSupply(pool: SandboxSupply): SandboxSupply {
  const free = new Map<string, Sandbox[]>();
  let resume: (() => void) | undefined;
  return {
    async acquire(config) {
      resume ??= pool.holdRefills?.() ?? (() => undefined);
      const list = free.get(configKey(config)) ?? [];
      while (list.length) {
        const s = list.pop()!;
        try {
          await s.sessionState();
          return s;
        } catch (e) {
          log.warn(`dropping dead recycled sandbox ${s.id.slice(0, 12)}: ${(e as Error).message}`);
          await s
            .destroy()
            .catch((d: Error) => log.warn(`cannot destroy ${s.id.slice(0, 12)}: ${d.message}`));
        }
      }
      return pool.acquire(config);
    },
    holdRefills: pool.holdRefills?.bind(pool),
    async release(sandbox) {
      try {
        await sandbox.reset();
      } catch (e) {
        log.debug(`reset of ${sandbox.id.slice(0, 12)} failed (${(e as Error).message}); back to the pool`);
        return pool.release(sandbox);
      }
      const key = configKey(sandbox.config);
      free.set(key, [...(free.get(key) ?? []), sandbox]);
    },
    async close() {
      const all = [...free.values()].flat();
      free.clear();
      try {
        await Promise.all(all.map((s) => pool.release(s)));
      } finally {
        resume?.();
        resume = undefined;
      }
    },
  };
}

/** A provider as a supply: a new container per episode, destroyed after it (the cold baseline). */
export function coldSupply(provider: SandboxProvider): SandboxSupply {
  return { acquire: (c) => provider.create(c), release: (s) => s.destroy() };
}

/**
 * Hands out sandboxes per task, honouring `sandbox.reset_between_episodes`: when it is
 * false, the sandbox an episode leaves is kept as it is (no reset) and given to the
 * task's next episode — what a misconfigured trainer does, and what the state-leak case
 * shows. `close` destroys the kept ones and leaves the supply open: it belongs to the
 * caller, and may be the app's warm pool, still lending sandboxes to live episodes.
 */
export class TaskSandboxes {
  private readonly kept = new Map<string, Sandbox[]>();

  constructor(private readonly supply: SandboxSupply) {}

  private key(task: Task): string {
    return `${task.name}|${configKey(sandboxConfig(task.sandbox, task.verifier))}`;
  }

  /** The supply for one episode of `task`. */
  supplyFor(task: Task): SandboxSupply {
    const key = this.key(task);
    const reuse = !task.sandbox.reset_between_episodes;
    const acquire = async (config: SandboxConfig) =>
      this.kept.get(key)?.pop() ?? (await this.supply.acquire(config));
    const release = async (sandbox: Sandbox) => {
      if (!reuse) return this.supply.release(sandbox);
      try {
        // A sandbox that died with its episode cannot carry state over: let it go.
        await sandbox.sessionState();
      } catch (e) {
        log.debug(`not keeping dead sandbox ${sandbox.id.slice(0, 12)}: ${(e as Error).message}`);
        return sandbox
          .destroy()
          .catch((d: Error) => log.warn(`cannot destroy ${sandbox.id.slice(0, 12)}: ${d.message}`));
      }
      const list = this.kept.get(key) ?? [];
      list.push(sandbox);
      this.kept.set(key, list);
    };
    return { acquire, release, holdRefills: this.supply.holdRefills?.bind(this.supply) };
  }

  /** Destroys the sandboxes kept for reuse (not the supply's). */
  async close(): Promise<void> {
    const all = [...this.kept.values()].flat();
    this.kept.clear();
    await Promise.allSettled(all.map((s) => s.destroy()));
  }
}
