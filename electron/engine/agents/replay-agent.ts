import type { TraceEvent } from '../../../shared/trace-events.js';
import {
  NEEDS_NOTHING,
  type AgentNeeds,
  AgentFailure,
  type Agent,
  type DecideInput,
  type Decision,
} from './agent.js';
import { rawOf } from './scripted-agent.js';

/** A recorded model output. */
export interface RecordedOutput {
  readonly step: number;
  readonly raw: string;
  readonly message: { content: string | null; tool_calls?: unknown };
}

/** The `model_output` events of a trace (its lineage included), in step order. */
export function recordedOutputs(events: readonly TraceEvent[]): RecordedOutput[] {
  const out: RecordedOutput[] = [];
  for (const e of events) {
    if (e.type !== 'model_output') continue;
    const m = (e.message ?? { content: e.raw }) as RecordedOutput['message'];
    out.push({ step: e.step, raw: e.raw, message: { content: m.content ?? null, tool_calls: m.tool_calls } });
  }
  return out.sort((a, b) => a.step - b.step);
}

/** Plays back the model outputs recorded in a trace, one per decision. */
export class ReplayAgent implements Agent {
  readonly kind = 'replay' as const;
  /** It plays a script: a rollback or fork rebuilds it past the lines consumed. */
  readonly needs: AgentNeeds = { ...NEEDS_NOTHING, position: this };
  private cursor: number;

  constructor(
    readonly spec: string,
    private readonly outputs: readonly RecordedOutput[],
    skip = 0,
  ) {
    this.cursor = skip;
  }

  async decide(_input: DecideInput): Promise<Decision> {
    const next = this.outputs[this.cursor];
    if (!next) {
      throw new AgentFailure(
        'script_exhausted',
        `${this.spec}: the recording has no more model outputs (it has ${this.outputs.length})`,
      );
    }
    this.cursor += 1;
    const message = { content: next.message.content, tool_calls: next.message.tool_calls };
    if (message.tool_calls === undefined) delete message.tool_calls;
    return { raw: next.raw || rawOf(message), message, latencyMs: 0 };
  }

  /** Outputs consumed so far (including skipped ones). */
  consumed(): number {
    return this.cursor;
  }

  describe(): Record<string, unknown> {
    return { outputs: this.outputs.length, skip: this.cursor };
  }
}
