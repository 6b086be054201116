import { logger } from '../log.js';
import { configKey } from './limits.js';
import type { Sandbox, SandboxConfig, SandboxProvider, SandboxSupply } from './sandbox.js';

const log = logger('pool');

/** Options of a {@link WarmPool}. */
export interface WarmPoolOptions {
  /** Ready sandboxes kept per config key (default 2; 0 disables warming). */
  readonly size?: number;
  /**
   * How many configs keep warm sandboxes at once (default {@link DEFAULT_WARM_CONFIGS}): the
   * most recently used. Each image a person opens is a config of its own, and each kept one
   * idle container (a walk through four worlds left "4 warm sandboxes wait idle").
   */
  readonly configs?: number;
}

/** Configs kept warm at once by default: the world in use and the one before it. */
export const DEFAULT_WARM_CONFIGS = 2;

interface Slot {
  readonly config: SandboxConfig;
  readonly ready: Sandbox[];
  starting: number;
  /** Consecutive background start failures; refills stop after a few until the next acquire. */
  failures: number;
  timer?: NodeJS.Timeout;
  /** A refill came due while refills were held: it starts when the holds are released. */
  deferred?: boolean;
  /** When it was last used (the pool's use counter; 0: never), which decides the configs kept warm. */
  usedAt: number;
}

const MAX_BACKGROUND_FAILURES = 3;
const REFILL_DELAY_MS = 100;

/**
 * Pre-started sandboxes per config (image + network + limits). `acquire` hands one over
 * in the clean state — from the pool when one is ready, started cold otherwise — and the
 * pool refills in the background. `release` resets a sandbox and keeps it, or destroys
 * it when the reset fails or the pool is full. `close` destroys everything it started.
 */
export class WarmPool implements SandboxSupply {
  readonly size: number;
  private readonly slots = new Map<string, Slot>();
  private readonly leased = new Set<Sandbox>();
  private readonly background = new Set<Promise<void>>();
  /** Set-ups under way (see {@link holdRefills}); refills that come due wait for them. */
  private holds = 0;
  private closed = false;
  readonly configs: number;
  /** Counts uses (acquire, release, a prewarm that fills): a slot's usedAt orders the configs. */
  private uses = 0;

  constructor(
    private readonly provider: SandboxProvider,
    options: WarmPoolOptions = {},
  ) {
    this.size = Math.max(0, Math.floor(options.size ?? 2));
    this.configs = Math.max(1, Math.floor(options.configs ?? DEFAULT_WARM_CONFIGS));
  }

  private slot(config: SandboxConfig): Slot {
    const key = configKey(config);
    let slot = this.slots.get(key);
    if (!slot) this.slots.set(key, (slot = { config, ready: [], starting: 0, failures: 0, usedAt: 0 }));
    return slot;
  }

  /** The slots kept warm: the `configs` most recently used. */
  private kept(): Set<Slot> {
    const used = [...this.slots.values()].filter((s) => s.usedAt > 0).sort((a, b) => b.usedAt - a.usedAt);
    return new Set(used.slice(0, this.configs));
  }

  /**
   * Marks `slot` used now and lets the sandboxes of configs no longer among the kept ones go
   * (their refills stop; one still starting goes when it is up, see refill).
   */
  private use(slot: Slot): void {
    slot.usedAt = ++this.uses;
    const kept = this.kept();
    for (const s of this.slots.values()) {
      if (kept.has(s)) continue;
      clearTimeout(s.timer);
      s.timer = undefined;
      s.deferred = false;
      for (const sandbox of s.ready.splice(0)) this.track(this.destroyQuietly(sandbox));
    }
  }

  /**
   * Starts sandboxes for `config` until the pool holds `size`; resolves when they are ready.
   * Best effort, and never at a more recently used config's cost: when `configs` others
   * are kept warm already, it starts none.
   */
  async prewarm(config: SandboxConfig): Promise<void> {
    const slot = this.slot(config);
    const kept = this.kept();
    if (!kept.has(slot) && kept.size >= this.configs) return;
    this.use(slot);
    clearTimeout(slot.timer);
    slot.timer = undefined;
    this.refill(slot);
    await Promise.all([...this.background]);
  }

  /** A sandbox in the clean state for `config`: a warm one if ready, else a cold start. */
  async acquire(config: SandboxConfig): Promise<Sandbox> {
    if (this.closed) throw new Error('the warm pool is closed');
    const slot = this.slot(config);
    slot.failures = 0;
    this.use(slot);
    let sandbox: Sandbox | undefined;
    while (!sandbox && slot.ready.length) {
      // Last in, first out: a just-released sandbox is as clean as a new one.
      const candidate = slot.ready.pop()!;
      // A pooled container may have died while it waited: probe it (one helper round trip).
      try {
        await candidate.sessionState();
        sandbox = candidate;
      } catch (e) {
        log.warn(`dropping dead pooled sandbox ${candidate.id.slice(0, 12)}: ${(e as Error).message}`);
        await this.destroyQuietly(candidate);
      }
    }
    sandbox ??= await this.provider.create(config);
    // close() ran while this acquire waited (a probe or a cold start): it could not see this
    // sandbox, so nobody else would destroy it.
    if (this.closed) {
      await this.destroyQuietly(sandbox);
      throw new Error('the warm pool is closed');
    }
    this.leased.add(sandbox);
    this.refillSoon(slot);
    return sandbox;
  }

  /** Takes a sandbox back: reset and pooled, or destroyed when the reset fails or the pool is full. */
  async release(sandbox: Sandbox): Promise<void> {
    this.leased.delete(sandbox);
    const slot = this.slot(sandbox.config);
    this.use(slot);
    if (this.closed || slot.ready.length >= this.size) {
      await sandbox.destroy();
      return;
    }
    try {
      await sandbox.reset();
    } catch (e) {
      log.warn(`reset of ${sandbox.id.slice(0, 12)} failed, destroying it: ${(e as Error).message}`);
      await sandbox.destroy();
      this.refill(slot);
      return;
    }
    if (this.closed) await sandbox.destroy();
    else slot.ready.push(sandbox);
  }

  /**
   * Holds the background refill while sandboxes just handed over are being set up (ten
   * branches restored at once): container starts would take the cores those restores
   * need. Refills that come due meanwhile start when the last hold is released, so the
   * pool still refills, after the branches are ready. Returns the release function
   * (calling it twice releases once).
   */
  holdRefills(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.holds > 0 || this.closed) return;
      for (const slot of this.slots.values()) if (slot.deferred) this.refillSoon(slot);
    };
  }

  /** Ready and starting counts per config key. */
  stats(): { key: string; ready: number; starting: number }[] {
    return [...this.slots].map(([key, s]) => ({ key, ready: s.ready.length, starting: s.starting }));
  }

  /** Destroys every sandbox the pool holds, is starting, or has handed out and not got back. */
  async close(): Promise<void> {
    this.closed = true;
    for (const slot of this.slots.values()) clearTimeout(slot.timer);
    await Promise.all([...this.background]);
    const all = [...this.leased, ...[...this.slots.values()].flatMap((s) => s.ready.splice(0))];
    this.leased.clear();
    const results = await Promise.allSettled(all.map((s) => s.destroy()));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length)
      throw new Error(`could not destroy ${failed.length} pooled sandbox(es): ${String(failed[0].reason)}`);
  }

  /**
   * Refills a little after a hand-over: a container start costs the engine (and the
   * machine) enough to slow the new owner's first calls if it ran at the same moment.
   */
  private refillSoon(slot: Slot): void {
    if (slot.timer) return;
    slot.deferred = false;
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (this.holds > 0) slot.deferred = true;
      else this.refill(slot);
    }, REFILL_DELAY_MS);
    slot.timer.unref();
  }

  private refill(slot: Slot): void {
    if (!this.kept().has(slot)) return;
    while (
      !this.closed &&
      slot.failures < MAX_BACKGROUND_FAILURES &&
      slot.ready.length + slot.starting < this.size
    ) {
      slot.starting++;
      const job = this.provider.create(slot.config).then(
        async (sandbox) => {
          slot.starting--;
          if (this.closed || !this.kept().has(slot)) await this.destroyQuietly(sandbox);
          else slot.ready.push(sandbox);
        },
        (e: Error) => {
          slot.starting--;
          slot.failures++;
          log.warn(`background start failed (${slot.failures}/${MAX_BACKGROUND_FAILURES}): ${e.message}`);
        },
      );
      this.track(job);
    }
  }

  /** Keeps `job` among the background work that close() waits for. */
  private track(job: Promise<void>): void {
    this.background.add(job);
    void job.finally(() => this.background.delete(job));
  }

  private async destroyQuietly(sandbox: Sandbox): Promise<void> {
    try {
      await sandbox.destroy();
    } catch (e) {
      log.warn(`cannot destroy ${sandbox.id.slice(0, 12)}: ${(e as Error).message}`);
    }
  }
}
