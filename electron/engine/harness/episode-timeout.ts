import type { Environment, StepAction, StepOutcome } from './environment.js';

/**
 * Truncates the episode when its time budget is spent. The budget counts time spent
 * running steps (the agent's decision included), not time paused at a breakpoint or
 * between steps in the stepper: debugging an episode must not time it out. A step that
 * ends past the budget ends the episode, and no call outlives the budget.
 */
export class EpisodeTimeout implements Environment {
  private spentMs = 0;
  private stepStart: number | null = null;

  constructor(
    private readonly inner: Environment,
    private readonly seconds: number,
  ) {}

  /** Marks the start of a step (before the agent decides). */
  beginStep(): void {
    this.stepStart = Date.now();
  }

  /** Charges the step's time to the budget. */
  endStep(): void {
    if (this.stepStart !== null) this.spentMs += Date.now() - this.stepStart;
    this.stepStart = null;
  }

  private used(): number {
    return this.spentMs + (this.stepStart === null ? 0 : Date.now() - this.stepStart);
  }

  /** Milliseconds of the budget left (at least 1 while it is not spent). */
  leftMs(): number {
    return Math.max(0, this.seconds * 1000 - this.used());
  }

  /** True once the budget is spent. */
  expired(): boolean {
    return this.used() >= this.seconds * 1000;
  }

  reset() {
    return this.inner.reset();
  }

  async step(action: StepAction): Promise<StepOutcome> {
    const left = Math.max(1, this.seconds * 1000 - this.used());
    const out = await this.inner.step({ ...action, episodeLeftMs: left });
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
