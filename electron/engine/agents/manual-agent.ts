import { NEEDS_NOTHING, AgentFailure, type Agent, type DecideInput, type Decision } from './agent.js';
import { rawOf } from './scripted-agent.js';

/** The agent a person drives behind `agent`: itself, or the model source of an exec agent run with `--model manual`. */
export function manualAgentOf(agent: Agent): ManualAgent | null {
  if (agent instanceof ManualAgent) return agent;
  const source = (agent as { source?: unknown }).source;
  return source instanceof ManualAgent ? source : null;
}

/** An assistant message a person provides (content and/or tool_calls in OpenAI format). */
export interface ManualMessage {
  readonly content: string | null;
  readonly tool_calls?: unknown;
}

/**
 * Why a manual agent's wait ended without a decision: a person paused the episode while
 * it waited (the step did not happen; the episode stays at its last step).
 */
export class DecisionReleased extends Error {
  override readonly name = 'DecisionReleased';
  constructor(readonly step: number) {
    super(`step ${step} waits for your decision: queue one, then Step`);
  }
}

/**
 * A person decides: `decide` waits until the UI or the CLI prompt calls `provide`.
 * A message provided before the agent asks is queued. `release` ends a wait without a
 * decision (Pause), so a paused episode never hangs on a person.
 */
export class ManualAgent implements Agent {
  readonly kind = 'manual' as const;
  readonly needs = NEEDS_NOTHING;
  readonly spec = 'manual';
  private readonly queue: ManualMessage[] = [];
  private waiter: ((m: ManualMessage) => void) | null = null;
  private releaser: (() => void) | null = null;
  /** A release asked before the wait began (Pause just as a step started). */
  private releasePending = false;
  private waitingListeners = new Set<(step: number) => void>();

  /** Gives the agent its next message. */
  provide(message: ManualMessage): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      this.releaser = null;
      w(message);
    } else this.queue.push(message);
  }

  /** True while `decide` is waiting for a person. */
  waiting(): boolean {
    return this.waiter !== null;
  }

  /**
   * Ends the current wait without a decision (`decide` rejects with DecisionReleased); when
   * not waiting yet, the next wait ends at once unless `clearRelease` comes first.
   */
  release(): void {
    if (this.releaser) this.releaser();
    else this.releasePending = true;
  }

  /** Forgets a release that found no wait (a new step or run begins). */
  clearRelease(): void {
    this.releasePending = false;
  }

  /** Called when the agent starts waiting for step `step`; returns an unsubscribe. */
  onWaiting(listener: (step: number) => void): () => void {
    this.waitingListeners.add(listener);
    return () => this.waitingListeners.delete(listener);
  }

  async decide(input: DecideInput): Promise<Decision> {
    // An abort listener added to a signal already aborted never fires: the wait would be forever.
    if (input.signal?.aborted) throw stoppedWaiting();
    const queued = this.queue.shift();
    if (!queued && this.releasePending) {
      this.releasePending = false;
      throw new DecisionReleased(input.step);
    }
    const message =
      queued ??
      (await new Promise<ManualMessage>((resolve, reject) => {
        this.waiter = resolve;
        this.releaser = () => {
          this.waiter = null;
          this.releaser = null;
          reject(new DecisionReleased(input.step));
        };
        for (const l of this.waitingListeners) l(input.step);
        input.signal?.addEventListener('abort', () => {
          this.waiter = null;
          this.releaser = null;
          reject(stoppedWaiting());
        });
      }));
    const normalized = { content: message.content ?? null, tool_calls: message.tool_calls };
    if (normalized.tool_calls === undefined) delete normalized.tool_calls;
    return { raw: rawOf(normalized), message: normalized, latencyMs: 0 };
  }

  describe(): Record<string, unknown> {
    return {};
  }
}

function stoppedWaiting(): AgentFailure {
  return new AgentFailure('stopped', 'the manual agent was stopped while waiting for input');
}
