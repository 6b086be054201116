import { describe, expect, it, vi } from 'vitest';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import type { Sandbox, SandboxConfig, SandboxProvider } from '../../electron/engine/sandbox/sandbox.js';
import { poolSupply, TaskSandboxes } from '../../electron/engine/sandbox/sandbox-supply.js';
import { WarmPool } from '../../electron/engine/sandbox/warm-pool.js';
import { task } from '../support/harness.js';

/** A sandbox that records what the pool did to it. */
interface FakeSandbox extends Sandbox {
  resets: number;
  destroyed: boolean;
  failReset: boolean;
  dead: boolean;
}

function fakeProvider() {
  const made: FakeSandbox[] = [];
  const provider: SandboxProvider = {
    backend: 'fake',
    async create(config: SandboxConfig) {
      const sb = {
        id: `sb${made.length + 1}`,
        config,
        backend: 'fake',
        resets: 0,
        destroyed: false,
        failReset: false,
        dead: false,
        async reset() {
          if (sb.failReset) throw new Error('reset failed');
          sb.resets++;
        },
        async destroy() {
          sb.destroyed = true;
        },
        async sessionState() {
          if (sb.dead) throw new Error('gone');
          return { cwd: '/workspace', env: {} };
        },
      } as unknown as FakeSandbox;
      made.push(sb);
      return sb;
    },
  };
  return { provider, made };
}

const config = defaultSandboxConfig();
const other = defaultSandboxConfig({ memory: '2g' });

describe('warm pool', () => {
  it('prewarms per config and hands over pooled sandboxes before starting new ones', async () => {
    const { provider, made } = fakeProvider();
    const pool = new WarmPool(provider, { size: 2 });
    await pool.prewarm(config);
    expect(made).toHaveLength(2);
    const a = await pool.acquire(config);
    expect(made).toHaveLength(2);
    const b = await pool.acquire(other);
    expect(b.config).toBe(other);
    expect(made).toHaveLength(3);
    expect(pool.stats().map((s) => s.ready)).toEqual([1, 0]);
    expect(a.id).toMatch(/^sb[12]$/);
    await pool.close();
  });

  it('keeps warm sandboxes for the most recently used configs only; a prewarm never evicts', async () => {
    const { provider, made } = fakeProvider();
    const third = defaultSandboxConfig({ memory: '3g' });
    const pool = new WarmPool(provider, { size: 1, configs: 2 });
    // The window lists three worlds: two are warmed, the third waits for a use.
    await pool.prewarm(config);
    await pool.prewarm(other);
    await pool.prewarm(third);
    expect(made.map((s) => s.config)).toEqual([config, other]);
    // The third is started: it is used now, and the least recently used config's idle one goes.
    const c = (await pool.acquire(third)) as FakeSandbox;
    expect(made[0].destroyed).toBe(true);
    expect(made[1].destroyed).toBe(false);
    await pool.prewarm(third); // its refill, without waiting for the refill's timer
    const idle = () => made.filter((s) => !s.destroyed && s !== c).map((s) => s.config);
    expect(idle()).toEqual([other, third]);
    // Listing the worlds again warms nothing more: two configs are kept already.
    await pool.prewarm(config);
    expect(idle()).toEqual([other, third]);
    expect(pool.stats().reduce((n, s) => n + s.ready + s.starting, 0)).toBe(2);
    await pool.close();
  });

  it('lets a sandbox still starting for a config no longer kept go once it is up', async () => {
    const { provider, made } = fakeProvider();
    let up!: () => void;
    const slow: SandboxProvider = {
      backend: 'fake',
      async create(c) {
        if (c === other) await new Promise<void>((r) => (up = r));
        return provider.create(c);
      },
    };
    const third = defaultSandboxConfig({ memory: '3g' });
    const pool = new WarmPool(slow, { size: 1, configs: 1 });
    const warming = pool.prewarm(other);
    await pool.acquire(third); // `other` is no longer kept while its sandbox starts
    up();
    await warming;
    expect(made.find((s) => s.config === other)?.destroyed).toBe(true);
    expect(pool.stats().find((s) => s.ready > 0)).toBeUndefined();
    await pool.close();
  });

  it('takes a released sandbox back after a reset, and hands it out first', async () => {
    const { provider } = fakeProvider();
    const pool = new WarmPool(provider, { size: 2 });
    await pool.prewarm(config);
    const a = (await pool.acquire(config)) as FakeSandbox;
    await pool.release(a);
    expect(a.resets).toBe(1);
    expect(a.destroyed).toBe(false);
    expect(await pool.acquire(config)).toBe(a);
    await pool.close();
  });

  it('destroys a released sandbox whose reset fails, or when the pool is full', async () => {
    const { provider } = fakeProvider();
    const pool = new WarmPool(provider, { size: 1 });
    const a = (await pool.acquire(config)) as FakeSandbox;
    a.failReset = true;
    await pool.release(a);
    expect(a.destroyed).toBe(true);
    await pool.prewarm(config);
    const b = (await pool.acquire(config)) as FakeSandbox;
    await pool.prewarm(config);
    await pool.release(b);
    expect(b.destroyed).toBe(true);
    await pool.close();
  });

  it('drops a pooled sandbox that died while waiting', async () => {
    const { provider, made } = fakeProvider();
    const pool = new WarmPool(provider, { size: 1 });
    await pool.prewarm(config);
    made[0].dead = true;
    const sb = await pool.acquire(config);
    expect(made[0].destroyed).toBe(true);
    expect(sb).not.toBe(made[0]);
    await pool.close();
  });

  it('closes by destroying pooled and handed-out sandboxes alike', async () => {
    const { provider, made } = fakeProvider();
    const pool = new WarmPool(provider, { size: 1 });
    await pool.prewarm(config);
    await pool.acquire(config);
    await pool.close();
    expect(made.every((s) => s.destroyed)).toBe(true);
    await expect(pool.acquire(config)).rejects.toThrow(/closed/);
  });

  it('destroys what in-flight refills and cold starts produce after close', async () => {
    const { provider, made } = fakeProvider();
    const create = provider.create.bind(provider);
    const gates: (() => void)[] = [];
    // Every start waits until the test opens its gate, so close() runs while they are in flight.
    provider.create = (c) => new Promise<void>((r) => gates.push(r)).then(() => create(c));
    const pool = new WarmPool(provider, { size: 2 });
    void pool.prewarm(config);
    const cold = pool.acquire(other);
    expect(gates).toHaveLength(3);
    const closed = pool.close();
    for (const open of gates) open();
    await closed;
    await expect(cold).rejects.toThrow(/closed/);
    expect(made).toHaveLength(3);
    expect(made.every((s) => s.destroyed)).toBe(true);
  });

  it('holds its refill while hand-overs are set up, and refills once they are released', async () => {
    vi.useFakeTimers();
    try {
      const { provider, made } = fakeProvider();
      const pool = new WarmPool(provider, { size: 3 });
      await pool.prewarm(config);
      const resume = pool.holdRefills();
      const again = pool.holdRefills();
      await Promise.all([pool.acquire(config), pool.acquire(config), pool.acquire(config)]);
      await vi.advanceTimersByTimeAsync(10_000);
      // Held: no container started while the three are being restored.
      expect(made).toHaveLength(3);
      resume();
      resume();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(made).toHaveLength(3);
      again();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(made).toHaveLength(6);
      expect(pool.stats()[0]).toMatchObject({ ready: 3, starting: 0 });
      await pool.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a batch recycling from the pool starts and removes no container while it runs', async () => {
    // Every sandbox a batch takes comes back at close: a refill started meanwhile would only
    // be destroyed then (the pool full), after taking a container start from the episodes.
    vi.useFakeTimers();
    try {
      const { provider, made } = fakeProvider();
      const pool = new WarmPool(provider, { size: 2 });
      await pool.prewarm(config);
      const batch = poolSupply(pool);
      for (let episode = 0; episode < 6; episode++) {
        const pair = await Promise.all([batch.acquire(config), batch.acquire(config)]);
        await vi.advanceTimersByTimeAsync(1_000);
        await Promise.all(pair.map((s) => batch.release(s)));
      }
      expect(made).toHaveLength(2);
      await batch.close!();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(made).toHaveLength(2);
      expect(made.some((s) => (s as FakeSandbox).destroyed)).toBe(false);
      expect(pool.stats()[0]).toMatchObject({ ready: 2, starting: 0 });
      await pool.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a task's kept sandboxes close without closing the pool they came from", async () => {
    // The app lends its one pool to a no-reset case's lead-in: closing the case's kept
    // sandboxes must leave the live episode's sandbox and later acquires alone.
    const { provider } = fakeProvider();
    const pool = new WarmPool(provider, { size: 1 });
    const t = task({
      name: 'leak',
      goal: 'g',
      sandbox: { reset_between_episodes: false },
    });
    const kept = new TaskSandboxes(pool);
    const supply = kept.supplyFor(t);
    const first = (await supply.acquire(config)) as FakeSandbox;
    await supply.release(first);
    const live = (await supply.acquire(config)) as FakeSandbox;
    expect(live).toBe(first);
    expect(live.resets).toBe(0);
    await kept.close();
    expect(live.destroyed).toBe(false);
    const later = (await pool.acquire(config)) as FakeSandbox;
    expect(later).not.toBe(live);
    await pool.close();
    expect(live.destroyed && later.destroyed).toBe(true);
  });
});
