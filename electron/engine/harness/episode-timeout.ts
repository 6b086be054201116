import type { Environment, StepAction, StepOutcome } from './environment.js';

/**
 * Truncates the episode when its wall-clock budget is spent: a step that finishes past
 * the deadline ends the episode, and the hard limit of each step never reaches past it.
 */
export class EpisodeTimeout implements Environment {
  private deadline = Infinity;

  constructor(
    private readonly inner: Environment,
    private readonly seconds: number,
    /** Time already spent (a fork or resume continues its parent's clock at zero; a reopened run may pass it). */
    private readonly spentMs = 0,
  ) {}

  /** Starts the clock (at reset, or when a fork or resume starts stepping). */
  start(): void {
    this.deadline = Date.now() + this.seconds * 1000 - this.spentMs;
  }

  /** True once the budget is spent. */
  expired(): boolean {
    return Date.now() >= this.deadline;
  }

  async reset() {
    const out = await this.inner.reset();
    this.start();
    return out;
  }

  async step(action: StepAction): Promise<StepOutcome> {
    if (this.deadline === Infinity) this.start();
    const left = Math.max(1, this.deadline - Date.now());
    const out = await this.inner.step({ ...action, hardMs: Math.min(action.hardMs ?? Infinity, left) });
    if (out.terminated || !this.expired()) return out;
    return { ...out, truncated: true, info: { ...out.info, truncation: 'episode_timeout' } };
  }

  warn(step: number, code: string, message: string): void {
    this.inner.warn(step, code, message);
  }

  abort(): Promise<void> {
    return this.inner.abort();
  }
}
