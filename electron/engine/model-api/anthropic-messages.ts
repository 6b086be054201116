import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ChatMessage } from './chat-message.js';
import { sendJson } from './local-http.js';
import { chatReply, type ChatReply, type OutgoingAnswer } from './assistant-answer.js';
import { AnthropicBlock, JsonObject, type AnthropicRequest } from './model-requests.js';

/**
 * The Anthropic Messages API (what Claude Code and the `@anthropic-ai/sdk` speak), mapped
 * onto Chat Completions so one recorder and one model source serve every API:
 * `system` becomes a system message, `tool_use` blocks become `tool_calls`,
 * `tool_result` blocks become `role: tool` messages, tools become function tools; the
 * answer goes back as `text` and `tool_use` blocks (JSON or the SDK's event stream).
 */
export function chatFromAnthropicRequest(request: AnthropicRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  const system = Array.isArray(request.system)
    ? request.system.map((b) => textOf([b])).join('\n\n')
    : textOf(request.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const { role, content } of request.messages) {
    if (role === 'system') {
      messages.push({ role: 'system', content: textOf(content) });
      continue;
    }
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    if (role === 'assistant') messages.push(assistantFrom(blocks));
    else messages.push(...userFrom(blocks));
  }
  const tools = request.tools
    // Server tools (web search, …) have a `type` and no schema: the endpoint cannot run them.
    ?.filter((t) => t.input_schema !== undefined)
    .map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  const toolChoice = chatToolChoice(request.tool_choice);
  // `metadata` (a user/session id) is about the caller, not what the model is shown: it
  // stays in the request as received, out of the body a fast-forward compares.
  const { system: _s, messages: _m, tools: _t, tool_choice: _c, metadata: _d, ...rest } = request;
  return {
    ...rest,
    messages,
    ...(tools ? { tools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
  };
}

/** An assistant turn: text blocks joined, `tool_use` blocks as tool calls (thinking is the model's own). */
function assistantFrom(blocks: readonly AnthropicBlock[]): Record<string, unknown> {
  let text = '';
  const calls: Record<string, unknown>[] = [];
  for (const b of blocks) {
    if (b.type === 'text' && b.text !== undefined) text += b.text;
    else if (b.type === 'tool_use') {
      calls.push({
        id: b.id ?? '',
        type: 'function',
        function: { name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) },
      });
    }
  }
  return {
    role: 'assistant',
    content: text === '' && calls.length > 0 ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/** A user turn: each `tool_result` a tool message (in order), the rest one user message after them. */
function userFrom(blocks: readonly AnthropicBlock[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const text: string[] = [];
  for (const b of blocks) {
    if (b.type === 'tool_result') {
      const body = textOf(b.content);
      out.push({
        role: 'tool',
        tool_call_id: b.tool_use_id ?? '',
        // An error result is shown to the model as such; the flag is not in Chat's form.
        content: b.is_error === true ? `[error] ${body}` : body,
      });
    } else if (b.type === 'text' && b.text !== undefined) text.push(b.text);
    else text.push(`[${b.type}]`);
  }
  if (text.length > 0) out.push({ role: 'user', content: text.join('\n') });
  return out;
}

/**
 * What the real Messages API answers 400 about a request's `tool_result` blocks, or null:
 * each must answer a `tool_use` of the assistant turn just before it (an unknown id, one
 * from an older turn, or one in a turn no `tool_use` precedes is "unexpected"), and each
 * `tool_use` at most once (a duplicate). Accepting them would hide the agent's bug: the
 * real API refuses them. Paths are named as the API names them (`messages.3.content.1`).
 */
export function toolResultProblem(request: AnthropicRequest): string | null {
  let asked = new Set<string>();
  for (const [i, { role, content }] of request.messages.entries()) {
    const blocks = Array.isArray(content) ? content : [];
    if (role === 'system') continue;
    if (role === 'assistant') {
      asked = new Set(blocks.filter((b) => b.type === 'tool_use').map((b) => b.id ?? ''));
      continue;
    }
    const answered = new Set<string>();
    for (const [j, b] of blocks.entries()) {
      if (b.type !== 'tool_result') continue;
      const id = b.tool_use_id ?? '';
      if (!asked.has(id))
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${JSON.stringify(id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message${asked.size ? ` (its ids: ${[...asked].map((x) => JSON.stringify(x)).join(', ')})` : ', which has none'}`;
      if (answered.has(id))
        return `messages.${i}.content.${j}: \`tool_use_id\` ${JSON.stringify(id)} is answered by more than one \`tool_result\` block; give each \`tool_use\` exactly one result`;
      answered.add(id);
    }
    asked = new Set();
  }
  return null;
}

/** Anthropic's `tool_choice` in Chat's form. */
function chatToolChoice(choice: AnthropicRequest['tool_choice']): unknown {
  if (choice === undefined) return undefined;
  if (choice.type === 'auto') return 'auto';
  if (choice.type === 'any') return 'required';
  if (choice.type === 'none') return 'none';
  return { type: 'function', function: { name: choice.name ?? '' } };
}

/** Text of a string or of content blocks (`text` blocks; others named by type). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: unknown) => {
        const block = AnthropicBlock.safeParse(p);
        return !block.success ? '' : block.data.text !== undefined ? block.data.text : `[${block.data.type}]`;
      })
      .join('');
  }
  return content == null ? '' : JSON.stringify(content);
}

/** A tool call's arguments as the object a `tool_use` block holds (a non-object is wrapped, never lost). */
export function toolInput(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args);
    const object = JsonObject.safeParse(parsed);
    return object.success ? object.data : { value: parsed };
  } catch {
    return { arguments: args };
  }
}

/** A rough token count (about four characters a token): what `count_tokens` answers. */
export function estimateTokens(request: Record<string, unknown>): number {
  const { system, messages, tools } = request;
  const chars = JSON.stringify({ system, messages, tools }).length;
  return Math.max(1, Math.ceil(chars / 4));
}

/** An Anthropic-shaped error body (what the SDK parses into `error.type` and its message). */
export function anthropicError(res: ServerResponse, status: number, code: string, message: string): void {
  const type =
    status === 401
      ? 'authentication_error'
      : status === 403
        ? 'permission_error'
        : status === 404
          ? 'not_found_error'
          : status === 413
            ? 'request_too_large'
            : status === 429
              ? 'rate_limit_error'
              : status >= 500
                ? 'api_error'
                : 'invalid_request_error';
  sendJson(res, status, { type: 'error', error: { type, message: `${message} (${code})` } });
}

/** The usage an answer reports: the source's counts, in Anthropic's names. */
function anthropicUsage(usage: unknown, request: Record<string, unknown>): Record<string, number> {
  const parsed = JsonObject.safeParse(usage);
  const u = parsed.success ? parsed.data : {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  return {
    input_tokens: num(u.input_tokens) ?? num(u.prompt_tokens) ?? estimateTokens(request),
    output_tokens: num(u.output_tokens) ?? num(u.completion_tokens) ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/** Answers a Messages request with the assistant answer as content blocks (JSON or the SDK's event stream). */
export function sendAnthropicAnswer(res: ServerResponse, answer: OutgoingAnswer): void {
  const { id, model, message, stream, usage, request } = answer;
  const calls = message.tool_calls ?? [];
  const content: Record<string, unknown>[] = [];
  if (message.content) content.push({ type: 'text', text: message.content });
  for (const c of calls) {
    content.push({
      type: 'tool_use',
      id: c.id,
      name: c.function.name,
      input: toolInput(c.function.arguments),
    });
  }
  const stopReason = calls.length > 0 ? 'tool_use' : 'end_turn';
  const used = anthropicUsage(usage, request);
  const base = { id: `msg_${id}`, type: 'message', role: 'assistant', model };
  if (!stream) {
    sendJson(res, 200, { ...base, content, stop_reason: stopReason, stop_sequence: null, usage: used });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', {
    message: {
      ...base,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...used, output_tokens: 0 },
    },
  });
  for (const [index, block] of content.entries()) {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    send('content_block_stop', { index });
  }
  send('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: used.output_tokens },
  });
  send('message_stop', {});
  res.end();
}

/**
 * A Chat Completions conversation as an Anthropic Messages request (what an
 * `anthropic:` model source sends upstream): system messages become `system`, tool
 * calls `tool_use` blocks, tool messages `tool_result` blocks in the user turn that
 * follows, consecutive same-role turns merged (the API requires alternation).
 */
export function anthropicRequestFromChat(
  messages: readonly ChatMessage[],
  tools: readonly { function: { name: string; description?: string; parameters?: unknown } }[],
): { system?: string; messages: Record<string, unknown>[]; tools?: Record<string, unknown>[] } {
  type Block = Record<string, unknown>;
  const system: string[] = [];
  const turns: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const m of messages) {
    const text = m.content ?? '';
    if (m.role === 'system') {
      if (text !== '') system.push(text);
    } else if (m.role === 'tool') {
      push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: text }]);
    } else if (m.role === 'assistant') {
      const blocks: Block[] = text !== '' ? [{ type: 'text', text }] : [];
      for (const c of m.tool_calls ?? [])
        blocks.push({
          type: 'tool_use',
          id: c.id,
          name: c.function.name,
          input: toolInput(c.function.arguments),
        });
      push('assistant', blocks);
    } else if (text !== '') push('user', [{ type: 'text', text }]);
  }
  return {
    ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
    messages: turns,
    ...(tools.length > 0
      ? {
          tools: tools.map((t) => ({
            name: t.function.name,
            ...(t.function.description ? { description: t.function.description } : {}),
            input_schema: t.function.parameters ?? { type: 'object', properties: {} },
          })),
        }
      : {}),
  };
}

/** The part of an Anthropic Messages response read (from the upstream API: parsed, never cast). */
const AnthropicResponse = z.looseObject({
  content: z.array(AnthropicBlock).optional(),
  usage: z
    .looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() })
    .optional(),
});

/** An Anthropic Messages response as a Chat assistant message and Chat-shaped usage. */
export function chatFromAnthropicResponse(response: Record<string, unknown>): ChatReply {
  const parsed = AnthropicResponse.safeParse(response);
  const blocks = parsed.success ? (parsed.data.content ?? []) : [];
  const text = blocks.flatMap((b) => (b.type === 'text' && b.text !== undefined ? [b.text] : [])).join('');
  const calls = blocks
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({
      id: b.id ?? '',
      type: 'function' as const,
      function: { name: b.name ?? '', arguments: JSON.stringify(b.input ?? {}) },
    }));
  const u = parsed.success ? parsed.data.usage : undefined;
  return chatReply(text, calls, u && { prompt: u.input_tokens, completion: u.output_tokens });
}
