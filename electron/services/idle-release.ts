import { logger } from '../engine/log.js';
import type { Clock } from './clock.js';

const log = logger('idle');

/** A live branch as the idle releaser sees it. */
export interface LiveActivity {
  readonly branch: string;
  /** Epoch ms of its last step, tool call, terminal input or a person's action on it. */
  readonly lastActive: number;
  /** Running a step (or an operation on it is in flight): never released. */
  readonly busy: boolean;
}

/** What the releaser needs of the live episodes (the episode manager). */
export interface IdleLive {
  activity(): readonly LiveActivity[];
  /** Releases one idle branch (sandbox destroyed, trace kept); false when it was busy or gone by then. */
  releaseIdle(branch: string, idleMs: number): Promise<boolean>;
}

/** How often the releaser looks: a tenth of the limit, between 1 s and 30 s (a release is at most that late). */
export function sweepEvery(limitMs: number): number {
  return Math.min(30_000, Math.max(1_000, Math.floor(limitMs / 10)));
}

/**
 * Releases live episodes idle for `ui.idle_release` (issue 33.8): the forgotten sandbox, paused
 * at a step or waiting for a decision, goes; its trace stays and it reopens at its step. A
 * branch running a step is never released, and counts as active until it stops.
 */
export class IdleReleaser {
  private cancel: (() => void) | null = null;
  private sweeping: Promise<string[]> | null = null;

  constructor(
    private readonly live: IdleLive,
    private readonly limitMs: number | null,
    private readonly clock: Clock,
  ) {}

  /** Starts looking (nothing when the setting is off). */
  start(): void {
    if (this.limitMs === null || this.cancel) return;
    const every = sweepEvery(this.limitMs);
    const tick = (): void => {
      this.cancel = this.clock.after(every, () => {
        void this.sweep().finally(() => {
          if (this.cancel) tick();
        });
      });
    };
    tick();
  }

  /** Stops looking; a sweep in flight finishes. */
  async stop(): Promise<void> {
    this.cancel?.();
    this.cancel = null;
    await this.sweeping;
  }

  /** Releases every branch idle past the limit now; resolves with the ones released. */
  sweep(): Promise<string[]> {
    this.sweeping ??= this.releaseDue().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  private async releaseDue(): Promise<string[]> {
    const limit = this.limitMs;
    if (limit === null) return [];
    const now = this.clock.now();
    const due = this.live.activity().filter((a) => !a.busy && now - a.lastActive >= limit);
    const released = await Promise.all(
      due.map(async (a) => {
        try {
          return (await this.live.releaseIdle(a.branch, now - a.lastActive)) ? a.branch : null;
        } catch (e) {
          log.warn(`releasing idle ${a.branch}: ${e instanceof Error ? e.message : String(e)}`);
          return null;
        }
      }),
    );
    return released.filter((b): b is string => b !== null);
  }
}
