import type { OpenAiTool } from '../../../shared/tool-schemas.js';

/** A chat message in OpenAI format, as the agent sees the conversation. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly tool_calls?: readonly {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
  }[];
  readonly tool_call_id?: string;
  readonly name?: string;
}

/** What an agent sees when deciding step `step`. */
export interface DecideInput {
  readonly step: number;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly OpenAiTool[];
  readonly signal?: AbortSignal;
}

/** A decision: the raw model output, kept apart from its parse (the harness parses). */
export interface Decision {
  /** The raw text of the output (content, plus tool calls as the model wrote them). */
  readonly raw: string;
  /** The assistant message as returned (content and/or tool_calls with string arguments). */
  readonly message: { content: string | null; tool_calls?: unknown };
  /** The exact request sent to a model, if any (never the API key). */
  readonly request?: unknown;
  readonly usage?: unknown;
  readonly logprobs?: unknown;
  readonly latencyMs?: number;
  /** The endpoint's id, model and finish reasons of this answer, when it gave them. */
  readonly response?: { id?: string; model?: string; finish_reasons?: string[] };
}

/** Why an agent could not decide: ends the episode with status `error`. */
export class AgentFailure extends Error {
  constructor(
    /** e.g. `script_exhausted`, `script_error`, `model_error`, `context_overflow`. */
    readonly endReason: string,
    message: string,
  ) {
    super(message);
    this.name = 'AgentFailure';
  }
}

/** Decides the next action from the observations so far. */
export interface Agent {
  /** The spec it was made from, e.g. `scripted:agent.jsonl`. */
  readonly spec: string;
  readonly kind: 'scripted' | 'replay' | 'openai' | 'manual';
  decide(input: DecideInput): Promise<Decision>;
  /** Parameters worth recording in the header (model, temperature, seed, base URL). */
  describe(): Record<string, unknown>;
}
