import { randomUUID } from 'node:crypto';
import { logger } from '../engine/log.js';
import type { EpisodeManager } from './episode-manager.js';
import type { Audience, EventBus } from './event-bus.js';
import type { DockerPort, StatsHandle } from './ports.js';
import { ServiceError } from './service-error.js';

const log = logger('stats');

interface Subscription {
  readonly handle: StatsHandle;
  readonly owner: Audience;
}

/** One long-lived Docker stats stream per subscription (`stats.subscribe` → `sandbox.stats` events). */
export class StatsService {
  private readonly subscriptions = new Map<string, Subscription>();

  constructor(
    private readonly docker: DockerPort,
    private readonly episodes: EpisodeManager,
    private readonly bus: EventBus,
  ) {}

  async subscribe(id: string, owner: Audience): Promise<string> {
    const controller = this.episodes.require(id);
    const sandbox = controller.sandbox();
    if (!sandbox) throw new ServiceError('sandbox_lost', `the sandbox of ${controller.branch} is gone`);
    if (sandbox.backend !== 'docker')
      throw new ServiceError('invalid_input', `stats need a Docker sandbox; this one is ${sandbox.backend}`);
    // The task's own limit, not the cgroup's (that adds the tmpfs sizes, container-spec.ts):
    // the processes' memory (stats.ts) is bounded by it, and it is the figure the limits line shows.
    const limit = sandbox.config.limits.memoryBytes;
    const handle = await this.docker.openStats(sandbox.id, limit);
    const subscription = `stats-${randomUUID()}`;
    const branch = controller.branch;
    this.subscriptions.set(subscription, { handle, owner });
    handle.onSample((s) =>
      this.bus.emit(
        'sandbox.stats',
        {
          subscription,
          branch,
          container: sandbox.id,
          t: s.t,
          cpu_percent: s.cpuPercent,
          memory_bytes: s.memoryBytes,
          memory_limit_bytes: limit,
          pids: s.pids,
        },
        owner,
      ),
    );
    handle.onEnd((reason) => {
      this.subscriptions.delete(subscription);
      this.bus.emit('sandbox.statsEnd', { subscription, message: reason }, owner);
    });
    return subscription;
  }

  unsubscribe(subscription: string): void {
    const s = this.subscriptions.get(subscription);
    if (!s) throw new ServiceError('not_found', `no stats stream ${subscription}`);
    this.subscriptions.delete(subscription);
    s.handle.close();
  }

  /** Ends the streams a connection opened (its socket closed), or all of them. */
  closeOwned(owner: Audience | undefined): void {
    for (const [id, s] of [...this.subscriptions]) {
      if (owner !== undefined && s.owner !== owner) continue;
      this.subscriptions.delete(id);
      s.handle.close();
      log.debug(`closed ${id}`);
    }
  }
}
