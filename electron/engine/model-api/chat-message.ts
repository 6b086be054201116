// The conversation's message in the OpenAI chat shape: what every model API here reads and
// writes (model-api/ sits below agents/, so the type lives here and agents re-export it).
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
