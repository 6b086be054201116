import type { Environment, StepAction, StepOutcome } from './environment.js';

/** Truncates the episode once `maxSteps` steps have run (Gymnasium's TimeLimit, counted in steps). */
export class MaxSteps implements Environment {
  constructor(
    private readonly inner: Environment,
    private readonly maxSteps: number,
  ) {}

  reset() {
    return this.inner.reset();
  }

  async step(action: StepAction): Promise<StepOutcome> {
    const out = await this.inner.step(action);
    if (out.terminated || action.step < this.maxSteps) return out;
    return { ...out, truncated: true, info: { ...out.info, truncation: out.info.truncation ?? 'max_steps' } };
  }

  warn(step: number, code: string, message: string): void {
    this.inner.warn(step, code, message);
  }

  abort(): Promise<void> {
    return this.inner.abort();
  }
}
