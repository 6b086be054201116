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
 * The reset runs beside what comes between two episodes (the trace closed and indexed, the
 * batch's state written, the next episode's trace opened): `release` starts it and returns,
 * and `acquire` waits for it. A sandbox whose reset failed goes back to the pool (which
 * resets or destroys it) and is never handed out; one reset moments ago is handed out
 * without another probe (the reset was one), one that waited longer is probed first.
 *
 * The pool's background refill is held from the first acquire until `close`: every sandbox
 * taken comes back at `close`, so a replacement started meanwhile would only be destroyed
 * then (a full pool), after taking a container start's CPU from the batch's episodes (two
 * starts and two removals per bench batch of 12, ~1/3 of its time on 2 cores).
 */
export function poolSupply(pool: SandboxSupply): SandboxSupply {
  const free = new Map<string, Recycled[]>();
  /** Resets under way (and their fall-backs to the pool): `close` waits for them. */
  const settling = new Set<Promise<unknown>>();
  let resume: (() => void) | undefined;
  return {
    async acquire(config) {
      resume ??= pool.holdRefills?.() ?? (() => undefined);
      const list = free.get(configKey(config)) ?? [];
      while (list.length) {
        // First released, first taken: its reset is the likeliest to be done.
        const r = list.shift()!;
        const resetAt = await r.reset;
        if (resetAt === null) continue; // back to the pool
        if (performance.now() - resetAt < PROBE_AFTER_MS) return r.sandbox;
        try {
          await r.sandbox.sessionState();
          return r.sandbox;
        } catch (e) {
          log.warn(`dropping dead recycled sandbox ${r.sandbox.id.slice(0, 12)}: ${(e as Error).message}`);
          await r.sandbox
            .destroy()
            .catch((d: Error) => log.warn(`cannot destroy ${r.sandbox.id.slice(0, 12)}: ${d.message}`));
        }
      }
      return pool.acquire(config);
    },
    holdRefills: pool.holdRefills?.bind(pool),
    async release(sandbox) {
      const reset = sandbox.reset().then(
        () => performance.now(),
        async (e: Error) => {
          log.debug(`reset of ${sandbox.id.slice(0, 12)} failed (${e.message}); back to the pool`);
          await pool
            .release(sandbox)
            .catch((d: Error) =>
              log.warn(`cannot return ${sandbox.id.slice(0, 12)} to the pool: ${d.message}`),
            );
          return null;
        },
      );
      settling.add(reset);
      void reset.finally(() => settling.delete(reset));
      const key = configKey(sandbox.config);
      free.set(key, [...(free.get(key) ?? []), { sandbox, reset }]);
    },
    async close() {
      await Promise.all([...settling]);
      const all = [...free.values()].flat();
      free.clear();
      try {
        const reset = await Promise.all(all.map(async (r) => ((await r.reset) === null ? null : r.sandbox)));
        await Promise.all(reset.flatMap((s) => (s ? [pool.release(s)] : [])));
      } finally {
        resume?.();
        resume = undefined;
      }
    },
  };
}

/** A sandbox a batch's episode gave back, and when its reset ended (null: it failed, the pool has it). */
interface Recycled {
  readonly sandbox: Sandbox;
  readonly reset: Promise<number | null>;
}

/**
 * A recycled sandbox reset less than this long ago (ms) is handed out without a probe: the
 * reset was a round trip to its helper. One that waited longer may have died meanwhile.
 */
const PROBE_AFTER_MS = 1_000;

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
