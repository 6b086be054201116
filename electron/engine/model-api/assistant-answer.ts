/**
 * An assistant answer in Chat Completions form, tool-call arguments as JSON strings: what
 * the model endpoint sends an exec agent, in either API's shape (responses-api.ts).
 */
export interface AssistantAnswer {
  readonly content: string | null;
  readonly tool_calls?: readonly {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
  }[];
}

/**
 * An answer on its way back to the agent, in whichever API it asked: the id and model to
 * name, the usage to report, the request it answers (echoed fields, a token estimate) and
 * how it is streamed (a flag, or Gemini's three forms). Every API's sender takes this one shape.
 */
export interface OutgoingAnswer<Stream = boolean> {
  readonly id: string;
  readonly model: string;
  readonly message: AssistantAnswer;
  readonly stream: Stream;
  readonly usage: unknown;
  readonly request: Record<string, unknown>;
}

/** Token counts in Chat Completions' names. */
export interface ChatUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** An API's response read back as a Chat assistant message and Chat-shaped usage (null when it gave none). */
export interface ChatReply {
  readonly message: { content: string | null; tool_calls?: AssistantAnswer['tool_calls'] };
  readonly usage: ChatUsage | null;
}

/**
 * The one reading of an upstream reply (Anthropic, Gemini) in Chat form: its text, null
 * when only tool calls came; its counts, the total the sum when the API gives none (or 0).
 */
export function chatReply(
  text: string,
  calls: NonNullable<AssistantAnswer['tool_calls']>,
  usage: { prompt?: number; completion?: number; total?: number } | undefined,
): ChatReply {
  const n = (v: number | undefined) => v ?? 0;
  return {
    message: {
      content: text === '' && calls.length > 0 ? null : text,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
    usage: usage
      ? {
          prompt_tokens: n(usage.prompt),
          completion_tokens: n(usage.completion),
          total_tokens: n(usage.total) || n(usage.prompt) + n(usage.completion),
        }
      : null,
  };
}
