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
