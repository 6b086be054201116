import { logger } from '../log.js';
import type { Environment, StepAction, StepOutcome } from './environment.js';

const log = logger('harness');

/** Grace after the hard limit before the backstop kills what still runs (the tool should have stopped it). */
const BACKSTOP_GRACE_MS = 5_000;

/**
 * Step time limits: past `softSeconds` the agent gets a warning observation; the hard
 * limit caps every call's effective timeout (the environment shows the fallback and rolls
 * back), and a backstop kills the sandbox's processes if a call overruns it anyway.
 */
export class StepTimeout implements Environment {
  constructor(
    private readonly inner: Environment,
    private readonly softSeconds: number,
    private readonly hardSeconds: number,
  ) {}

  reset() {
    return this.inner.reset();
  }

  async step(action: StepAction): Promise<StepOutcome> {
    const hardMs = Math.min(action.hardMs ?? Infinity, this.hardSeconds * 1000);
    const soft = setTimeout(() => {
      this.inner.warn(
        action.step,
        'soft_timeout',
        `step ${action.step} has run longer than the soft step timeout (${this.softSeconds} s); the hard limit is ${this.hardSeconds} s`,
      );
    }, this.softSeconds * 1000);
    const backstop = setTimeout(() => {
      log.warn(
        `step ${action.step} overran its hard limit by ${BACKSTOP_GRACE_MS} ms; killing sandbox processes`,
      );
      this.inner.abort().catch((e: Error) => log.error(`backstop kill failed: ${e.message}`));
    }, hardMs + BACKSTOP_GRACE_MS);
    try {
      return await this.inner.step({ ...action, hardMs });
    } finally {
      clearTimeout(soft);
      clearTimeout(backstop);
    }
  }

  warn(step: number, code: string, message: string): void {
    this.inner.warn(step, code, message);
  }

  abort(): Promise<void> {
    return this.inner.abort();
  }
}
