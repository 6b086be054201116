import { logger } from '../log.js';
import type { DockerEngine } from './client.js';

const log = logger('docker');

/**
 * Streams the engine's `oom` events for containers with `label`; calls `onOom` with the
 * container id. Returns a function that stops listening. See {@link OomEvents} for how
 * this signal relates to the in-container cgroup counter.
 */
export async function watchOomEvents(
  engine: DockerEngine,
  label: string,
  onOom: (id: string) => void,
): Promise<() => void> {
  const stream = (await engine.docker.getEvents({
    filters: { type: ['container'], event: ['oom'], label: [label] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  // A listener must not keep a CLI process alive on its own.
  (stream as { socket?: { unref(): void } }).socket?.unref();
  let buf = '';
  stream.on('data', (chunk: Buffer) => {
    buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      try {
        const id = (JSON.parse(line) as { id?: string }).id;
        if (id) onOom(id);
      } catch (e) {
        log.warn(`unreadable Docker event (${(e as Error).message}): ${line.slice(0, 200)}`);
      }
    }
  });
  stream.on('error', (e: Error) => log.warn(`the Docker event stream failed: ${e.message}`));
  return () => stream.destroy();
}

/**
 * Per-container tally of the engine's `oom` events, with a bounded wait for one that has
 * not arrived yet.
 *
 * Which OOM signal is authoritative: the helper reads the container cgroup's `oom_kill`
 * counter before and after each call. The kernel increments it when it picks the victim,
 * before the victim dies, so when the helper reaps a SIGKILLed command the counter already
 * says whether the OOM killer did it: synchronous, exact, no race. Docker's `oom` event
 * is asynchronous (containerd watches the cgroup from the host and relays it through
 * the daemon) and may arrive after the call's answer; it is the fallback for containers
 * that cannot read their cgroup files (cgroup v2 without a private namespace, a masked
 * /sys/fs/cgroup), where the host waits a moment for it ({@link OomEvents.waitAbove}).
 */
export class OomEvents {
  private readonly counts = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  private stop: (() => void) | undefined;

  /** Subscribes to the engine's OOM events for containers with `label`. */
  async watch(engine: DockerEngine, label: string): Promise<void> {
    this.stop = await watchOomEvents(engine, label, (id) => this.record(id));
  }

  /** Counts one event for `id` and wakes whoever waits for it. */
  record(id: string): void {
    this.counts.set(id, this.count(id) + 1);
    for (const wake of [...this.waiters]) wake();
  }

  /** How many OOM events the engine has reported for `id` so far. */
  count(id: string): number {
    return this.counts.get(id) ?? 0;
  }

  /** Resolves true as soon as `id` has more than `seen` events, false after `ms`. */
  waitAbove(id: string, seen: number, ms: number): Promise<boolean> {
    if (this.count(id) > seen) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(value);
      };
      const check = () => {
        if (this.count(id) > seen) done(true);
      };
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(check);
    });
  }

  /** Drops the tally of a removed container. */
  forget(id: string): void {
    this.counts.delete(id);
  }

  /** Stops listening to the engine. */
  close(): void {
    this.stop?.();
    this.stop = undefined;
  }
}
