import { z } from 'zod';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ChatMessage } from './chat-message.js';

/**
 * The model requests an agent sends the episode's endpoint (model-endpoint.ts), typed once
 * per API and parsed where they enter: the agent runs code the engine does not trust (inside
 * the sandbox or as a process of its own), so a request is checked against its API's schema
 * before anything reads it, and one that does not fit is answered HTTP 400 in that API's own
 * error shape naming the field and what was expected — never a crash or a cast. Unknown
 * fields are kept (SDKs send many the endpoint has no use for); the fields read are typed.
 */

/** The most messages (turns, items, contents) a request may hold: a long session fits, a flood does not. */
export const MAX_MESSAGES = 20_000;
/** The most tools a request may offer. */
export const MAX_TOOLS = 2_000;
/** The most parts (blocks) one message may hold. */
export const MAX_PARTS = 10_000;

const many = <T extends z.ZodType>(item: T, max: number) => z.array(item).max(max);
/** A JSON object of any fields (a tool's schema, its arguments, a usage). */
export const JsonObject = z.record(z.string(), z.unknown());

// ---------------------------------------------------------------- Chat Completions

/** A content part (`{type: "text", text}`, an image, …). */
const ChatPart = z.looseObject({ type: z.string(), text: z.string().optional() });
/** A tool call of an assistant message. */
const ChatToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
/** One message of a Chat Completions request. */
const ChatMessageIn = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z
    .union([z.string(), many(ChatPart, MAX_PARTS)])
    .nullable()
    .optional(),
  tool_calls: many(ChatToolCall, MAX_PARTS).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});
/** A tool offered: a function tool has its `function`; other kinds (custom tools) only a type. */
const ChatTool = z
  .looseObject({
    type: z.string(),
    function: z
      .looseObject({
        name: z.string().min(1),
        description: z.string().optional(),
        parameters: JsonObject.optional(),
      })
      .optional(),
  })
  .refine((t) => t.type !== 'function' || t.function !== undefined, {
    message: 'a function tool needs its function {name, parameters}',
    path: ['function'],
  });

/** A Chat Completions request (and what every other API's request becomes, see model-endpoint.ts). */
export const ChatRequest = z.looseObject({
  model: z.string().optional(),
  messages: many(ChatMessageIn, MAX_MESSAGES),
  tools: many(ChatTool, MAX_TOOLS).optional(),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});
/** A Chat Completions request, checked. */
export type ChatRequest = z.output<typeof ChatRequest>;
type ChatMessageIn = z.output<typeof ChatMessageIn>;

/** Text of Chat content: a string, or its parts' text (other parts named by type). */
function chatText(content: ChatMessageIn['content']): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return content;
  return content.map((p) => p.text ?? `[${p.type}]`).join('');
}

/**
 * The conversation as the agent's decision sees it (agents/agent.ts ChatMessage): content
 * as text, a `developer` message as the system message it is for Chat models.
 */
export function chatMessages(request: ChatRequest): ChatMessage[] {
  return request.messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role,
    content: chatText(m.content),
    ...(m.tool_calls
      ? {
          tool_calls: m.tool_calls.map((c) => ({
            id: c.id,
            type: c.type,
            function: { name: c.function.name, arguments: c.function.arguments },
          })),
        }
      : {}),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
    ...(m.name !== undefined ? { name: m.name } : {}),
  }));
}

/** The function tools a request offers (what an answer is parsed against). */
export function chatTools(request: ChatRequest): OpenAiTool[] {
  return (request.tools ?? []).flatMap((t) =>
    t.type === 'function' && t.function
      ? [
          {
            type: 'function' as const,
            function: {
              name: t.function.name,
              description: t.function.description ?? '',
              parameters: t.function.parameters ?? { type: 'object', properties: {} },
            },
          },
        ]
      : [],
  );
}

// ---------------------------------------------------------------- Anthropic Messages

/** A content block (`text`, `tool_use`, `tool_result`, `thinking`, `image`, …). */
export const AnthropicBlock = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  content: z
    .union([z.string(), many(z.looseObject({ type: z.string(), text: z.string().optional() }), MAX_PARTS)])
    .optional(),
  is_error: z.boolean().optional(),
});
/** A content block, checked. */
export type AnthropicBlock = z.output<typeof AnthropicBlock>;
const AnthropicContent = z.union([z.string(), many(AnthropicBlock, MAX_PARTS)]);

/** An Anthropic Messages request. */
export const AnthropicRequest = z.looseObject({
  model: z.string().optional(),
  system: AnthropicContent.optional(),
  messages: many(
    z.looseObject({
      // Claude Code 2.1 sends system reminders as `role: system` turns among the messages.
      role: z.enum(['user', 'assistant', 'system']),
      content: AnthropicContent,
    }),
    MAX_MESSAGES,
  ),
  tools: many(
    z.looseObject({
      name: z.string().optional(),
      description: z.string().optional(),
      input_schema: JsonObject.optional(),
      type: z.string().optional(),
    }),
    MAX_TOOLS,
  ).optional(),
  tool_choice: z
    .looseObject({ type: z.enum(['auto', 'any', 'none', 'tool']), name: z.string().optional() })
    .optional(),
  stream: z.boolean().optional(),
});
/** An Anthropic Messages request, checked. */
export type AnthropicRequest = z.output<typeof AnthropicRequest>;

// ---------------------------------------------------------------- Gemini

/** A part of a Gemini content (`text`, `functionCall`, `functionResponse`, inline data, …). */
export const GeminiPart = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: z
    .looseObject({ id: z.string().optional(), name: z.string(), args: JsonObject.optional() })
    .optional(),
  functionResponse: z
    .looseObject({ id: z.string().optional(), name: z.string().optional(), response: z.unknown().optional() })
    .optional(),
});
/** A part of a Gemini content, checked. */
export type GeminiPart = z.output<typeof GeminiPart>;
const GeminiContent = z.looseObject({
  role: z.enum(['user', 'model', 'function']).optional(),
  parts: many(GeminiPart, MAX_PARTS),
});
const GeminiDeclaration = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  parameters: z.unknown().optional(),
  parametersJsonSchema: z.unknown().optional(),
});
const GeminiToolConfig = z.looseObject({
  functionCallingConfig: z
    .looseObject({
      mode: z.string().optional(),
      allowedFunctionNames: many(z.string(), MAX_TOOLS).optional(),
    })
    .optional(),
});

/** A Gemini generateContent request (camelCase or the REST API's snake_case names). */
export const GeminiRequest = z.looseObject({
  contents: many(GeminiContent, MAX_MESSAGES),
  systemInstruction: z.union([z.string(), GeminiContent.partial({ parts: true })]).optional(),
  system_instruction: z.union([z.string(), GeminiContent.partial({ parts: true })]).optional(),
  tools: many(
    z.looseObject({
      functionDeclarations: many(GeminiDeclaration, MAX_TOOLS).optional(),
      function_declarations: many(GeminiDeclaration, MAX_TOOLS).optional(),
    }),
    MAX_TOOLS,
  ).optional(),
  toolConfig: GeminiToolConfig.optional(),
  tool_config: GeminiToolConfig.optional(),
});
/** A Gemini request, checked. */
export type GeminiRequest = z.output<typeof GeminiRequest>;

// ---------------------------------------------------------------- OpenAI Responses

/** One input item (a message, a function call or its output, a custom tool's call). */
const ResponsesItem = z.looseObject({
  type: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']).optional(),
  content: z.unknown().optional(),
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  input: z.string().optional(),
  output: z.unknown().optional(),
});
/** One input item, checked. */
export type ResponsesItem = z.output<typeof ResponsesItem>;

/** An OpenAI Responses request. */
export const ResponsesRequest = z.looseObject({
  model: z.string().optional(),
  instructions: z.string().nullable().optional(),
  input: z.union([z.string(), many(ResponsesItem, MAX_MESSAGES)]),
  tools: many(
    z.looseObject({
      type: z.string(),
      name: z.string().optional(),
      description: z.string().nullable().optional(),
      parameters: JsonObject.nullable().optional(),
    }),
    MAX_TOOLS,
  ).optional(),
  // Stateless: the endpoint keeps no responses to continue from.
  previous_response_id: z
    .null({
      error: 'is not supported: the endpoint keeps no responses; send the whole conversation as input',
    })
    .optional(),
  stream: z.boolean().optional(),
});
/** An OpenAI Responses request, checked. */
export type ResponsesRequest = z.output<typeof ResponsesRequest>;

/** A part that carries text. */
const TextPart = z.looseObject({ text: z.string() });

/** Text of message content as the model is shown it: a string, or its parts' text (Responses, Chat). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((p: unknown) => {
        const part = TextPart.safeParse(p);
        return part.success ? part.data.text : '';
      })
      .join('');
  return content == null ? '' : JSON.stringify(content);
}

// ---------------------------------------------------------------- the edge

/** A request that does not fit its API: what to answer (HTTP 400, the API's own error shape). */
export interface RequestProblem {
  readonly code: 'invalid_request';
  readonly message: string;
}

/** One issue, and where it is. */
interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** Whether it says only that the value is of another type (a member that got less far). */
  readonly typeOnly: boolean;
}

/**
 * The issues of a failed parse, a union's taken from the member that got furthest (a list of
 * messages where a string was also allowed says what is wrong inside the list, not only that
 * the value is neither).
 */
function deepest(issues: readonly z.core.$ZodIssue[], at: readonly PropertyKey[] = []): Issue[] {
  return issues.flatMap((i): Issue[] => {
    const path = [...at, ...i.path];
    if (i.code !== 'invalid_union' || i.errors.length === 0)
      return [{ path, message: i.message, typeOnly: i.code === 'invalid_type' }];
    const members = i.errors.map((e) => deepest(e, path));
    // How far a member got: deeper first, then a member that matched the type over one that did not.
    const reach = (m: Issue[]) => Math.max(...m.map((x) => 2 * x.path.length + (x.typeOnly ? 0 : 1)));
    const best = members.reduce((a, b) => (reach(b) > reach(a) ? b : a));
    return reach(best) > 2 * path.length ? best : [{ path, message: i.message, typeOnly: false }];
  });
}

/** Each issue as `path: what was expected` (the API's own names: `messages.3.content`). */
export function requestIssues(api: string, error: z.ZodError): RequestProblem {
  const all = deepest(error.issues);
  const shown = all.slice(0, 3).map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`);
  const more = all.length > 3 ? `; and ${all.length - 3} more` : '';
  return {
    code: 'invalid_request',
    message: `the request does not fit the ${api} API: ${shown.join('; ')}${more}`,
  };
}

/** Parses a request body against `schema`: the typed request, or the problem to answer 400 with. */
export function parseRequest<S extends z.ZodType>(
  api: string,
  schema: S,
  body: unknown,
): { ok: true; request: z.output<S> } | { ok: false; problem: RequestProblem } {
  const r = schema.safeParse(body);
  return r.success ? { ok: true, request: r.data } : { ok: false, problem: requestIssues(api, r.error) };
}
