import { AgentFailure, type Agent, type DecideInput, type Decision } from './agent.js';
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
 * A person decides: `decide` waits until the UI or the CLI prompt calls `provide`.
 * A message provided before the agent asks is queued.
 */
export class ManualAgent implements Agent {
  readonly kind = 'manual' as const;
  readonly spec = 'manual';
  private readonly queue: ManualMessage[] = [];
  private waiter: ((m: ManualMessage) => void) | null = null;
  private waitingListeners = new Set<(step: number) => void>();

  /** Gives the agent its next message. */
  provide(message: ManualMessage): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(message);
    } else this.queue.push(message);
  }

  /** True while `decide` is waiting for a person. */
  waiting(): boolean {
    return this.waiter !== null;
  }

  /** Called when the agent starts waiting for step `step`; returns an unsubscribe. */
  onWaiting(listener: (step: number) => void): () => void {
    this.waitingListeners.add(listener);
    return () => this.waitingListeners.delete(listener);
  }

  async decide(input: DecideInput): Promise<Decision> {
    const queued = this.queue.shift();
    const message =
      queued ??
      (await new Promise<ManualMessage>((resolve, reject) => {
        this.waiter = resolve;
        for (const l of this.waitingListeners) l(input.step);
        input.signal?.addEventListener('abort', () => {
          this.waiter = null;
          reject(new AgentFailure('stopped', 'the manual agent was stopped while waiting for input'));
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
