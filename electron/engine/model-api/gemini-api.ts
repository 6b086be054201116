import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ChatMessage } from './chat-message.js';
import { toolInput } from './anthropic-messages.js';
import { GeminiPart, JsonObject, type GeminiRequest } from './model-requests.js';
import { sendJson } from './local-http.js';
import { chatReply, type AssistantAnswer, type ChatReply, type OutgoingAnswer } from './assistant-answer.js';

/**
 * The Gemini API (`generateContent`, what Gemini CLI and the `@google/genai` SDK speak),
 * mapped onto Chat Completions so one recorder and one model source serve every API:
 * `systemInstruction` becomes a system message, `functionCall` parts become `tool_calls`,
 * `functionResponse` parts become `role: tool` messages, `functionDeclarations` become
 * function tools; the answer goes back as a candidate's `text` and `functionCall` parts
 * (one JSON body, server-sent events with `?alt=sse`, or the JSON-array stream).
 */

/** What a Gemini path asks for: the method and the model named in it. */
export interface GeminiRoute {
  readonly method: 'generateContent' | 'streamGenerateContent' | 'countTokens';
  readonly model: string;
}

/** `/v1beta/models/{model}:{method}` (also `/v1/…`, and `tunedModels/`), or null. */
export function geminiRoute(path: string): GeminiRoute | null {
  const m =
    /^\/(?:v1beta|v1|v1alpha)\/(?:models|tunedModels)\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(
      path,
    );
  if (!m) return null;
  let model = m[1];
  try {
    model = decodeURIComponent(model);
  } catch {
    // a malformed escape: the name as sent
  }
  const method = m[2] === 'countTokens' || m[2] === 'streamGenerateContent' ? m[2] : 'generateContent';
  return { method, model };
}

type Part = Record<string, unknown>;

/** The id a functionCall without one gets: its turn and place (stable across requests). */
function derivedId(turn: number, index: number): string {
  return `call_${turn}_${index}`;
}

/**
 * A Gemini request as Chat Completions: `model` is the path's. A functionCall without an
 * `id` gets one from its place in the conversation, and a functionResponse without one
 * takes the id of the call of the same name in the model turn before it (stepbox's answers
 * always carry ids, which Gemini clients send back).
 */
export function chatFromGeminiRequest(request: GeminiRequest, model: string): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  const system = textOfContent(request.systemInstruction ?? request.system_instruction);
  if (system !== '') messages.push({ role: 'system', content: system });
  let lastCalls: { id: string; name: string; used: boolean }[] = [];
  for (const [turn, { role, parts }] of request.contents.entries()) {
    if (role === 'model') {
      let text = '';
      const calls: Record<string, unknown>[] = [];
      lastCalls = [];
      for (const [i, p] of parts.entries()) {
        // A thought is the model's own reasoning, not part of what it answered.
        if (p.text !== undefined && p.thought !== true) text += p.text;
        const fc = p.functionCall;
        if (fc) {
          const id = fc.id !== undefined && fc.id !== '' ? fc.id : derivedId(turn, i);
          lastCalls.push({ id, name: fc.name, used: false });
          calls.push({
            id,
            type: 'function',
            function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
          });
        }
      }
      messages.push({
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      continue;
    }
    const text: string[] = [];
    for (const p of parts) {
      const fr = p.functionResponse;
      if (fr) {
        const name = fr.name ?? '';
        let id = fr.id !== undefined && fr.id !== '' ? fr.id : null;
        const match = lastCalls.find((x) => !x.used && (id !== null ? x.id === id : x.name === name));
        if (match) match.used = true;
        id ??= match?.id ?? `call_${name}`;
        messages.push({ role: 'tool', tool_call_id: id, content: responseText(fr.response) });
      } else if (p.text !== undefined) text.push(p.text);
      else {
        const kind = Object.keys(p)[0];
        if (kind) text.push(`[${kind}]`);
      }
    }
    if (text.length > 0) messages.push({ role: 'user', content: text.join('\n') });
  }
  const tools: Record<string, unknown>[] = [];
  for (const t of request.tools ?? []) {
    for (const d of t.functionDeclarations ?? t.function_declarations ?? []) {
      tools.push({
        type: 'function',
        function: {
          name: d.name,
          ...(d.description !== undefined ? { description: d.description } : {}),
          parameters: jsonSchemaOf(d.parametersJsonSchema ?? d.parameters) ?? {
            type: 'object',
            properties: {},
          },
        },
      });
    }
  }
  const toolChoice = chatToolChoice(request.toolConfig ?? request.tool_config);
  const {
    contents: _c,
    systemInstruction: _s,
    system_instruction: _s2,
    tools: _t,
    toolConfig: _tc,
    tool_config: _tc2,
    ...rest
  } = request;
  return {
    ...rest,
    model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
  };
}

/** A functionResponse's `response` as the text the model is shown: its `output` (or `error`) text, else the JSON. */
function responseText(response: unknown): string {
  const r = JsonObject.safeParse(response);
  if (r.success) {
    const keys = Object.keys(r.data);
    const { output, error } = r.data;
    if (keys.length === 1 && typeof output === 'string') return output;
    if (keys.length === 1 && typeof error === 'string') return `[error] ${error}`;
  }
  return typeof response === 'string' ? response : JSON.stringify(response ?? null);
}

/** Text of a Content (`{parts: [{text}]}`) or a string. */
function textOfContent(content: GeminiRequest['systemInstruction']): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return (content.parts ?? []).map((p) => p.text ?? '').join('');
}

/**
 * Gemini's OpenAPI-style schema (`type: "OBJECT"`) as JSON Schema (lower-case types), so
 * an edit of a call's arguments is checked against it like any tool's.
 */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if (k === 'properties' && v && typeof v === 'object' && !Array.isArray(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, jsonSchemaOf(s)]));
    else out[k] = typeof v === 'object' ? jsonSchemaOf(v) : v;
  }
  return out;
}

/** Gemini's `toolConfig.functionCallingConfig.mode` in Chat's form. */
function chatToolChoice(config: GeminiRequest['toolConfig']): unknown {
  const fc = config?.functionCallingConfig;
  if (!fc) return undefined;
  const names = fc.allowedFunctionNames ?? [];
  if (fc.mode === 'ANY' && names.length === 1) return { type: 'function', function: { name: names[0] } };
  if (fc.mode === 'ANY') return 'required';
  if (fc.mode === 'NONE') return 'none';
  if (fc.mode === 'AUTO') return 'auto';
  return undefined;
}

/** A rough token count (about four characters a token): what `countTokens` answers. */
export function estimateGeminiTokens(request: Record<string, unknown>): number {
  const { contents, systemInstruction, tools, generateContentRequest } = request;
  const chars = JSON.stringify({ contents, systemInstruction, tools, generateContentRequest }).length;
  return Math.max(1, Math.ceil(chars / 4));
}

/** The gRPC status name Google APIs put beside an HTTP status. */
function statusName(status: number): string {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'ABORTED';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status >= 500) return 'INTERNAL';
  return 'INVALID_ARGUMENT';
}

/** A Google-shaped error body (`{error: {code, message, status}}`, what the SDK and Gemini CLI show). */
export function geminiError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, {
    error: { code: status, message: `${message} (${code})`, status: statusName(status) },
  });
}

/** How a Gemini answer is sent: one body, server-sent events (`?alt=sse`) or a JSON array streamed. */
export type GeminiStream = 'none' | 'sse' | 'json-array';

/** The usage an answer reports, in Gemini's names. */
function geminiUsage(usage: unknown, request: Record<string, unknown>): Record<string, number> {
  const parsed = JsonObject.safeParse(usage);
  const u = parsed.success ? parsed.data : {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const prompt =
    num(u.promptTokenCount) ?? num(u.prompt_tokens) ?? num(u.input_tokens) ?? estimateGeminiTokens(request);
  const out = num(u.candidatesTokenCount) ?? num(u.completion_tokens) ?? num(u.output_tokens) ?? 0;
  return { promptTokenCount: prompt, candidatesTokenCount: out, totalTokenCount: prompt + out };
}

/** The answer as a Gemini response: one candidate whose parts are the text and the function calls. */
export function geminiResponseOf(
  id: string,
  model: string,
  message: AssistantAnswer,
  usage: unknown,
  request: Record<string, unknown>,
): Record<string, unknown> {
  const parts: Part[] = [];
  if (message.content) parts.push({ text: message.content });
  for (const c of message.tool_calls ?? []) {
    parts.push({ functionCall: { id: c.id, name: c.function.name, args: toolInput(c.function.arguments) } });
  }
  // A candidate always has a part: an empty answer is an empty text, as the API sends it.
  if (parts.length === 0) parts.push({ text: '' });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: geminiUsage(usage, request),
    modelVersion: model,
    responseId: id,
  };
}

/** Answers a generateContent / streamGenerateContent request. */
export function sendGeminiAnswer(res: ServerResponse, answer: OutgoingAnswer<GeminiStream>): void {
  const { id, model, message, stream, usage, request } = answer;
  const response = geminiResponseOf(id, model, message, usage, request);
  if (stream === 'none') {
    sendJson(res, 200, response);
    return;
  }
  if (stream === 'sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(`data: ${JSON.stringify(response)}\r\n\r\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(`[${JSON.stringify(response)}\n]`);
}

/**
 * A Chat Completions conversation as a Gemini request (what a `gemini:` model source
 * sends upstream): system messages become `systemInstruction`, tool calls `functionCall`
 * parts, tool messages `functionResponse` parts (`{output}`) in the user turn that follows,
 * consecutive same-role turns merged.
 */
export function geminiRequestFromChat(
  messages: readonly ChatMessage[],
  tools: readonly { function: { name: string; description?: string; parameters?: unknown } }[],
): Record<string, unknown> {
  const system: string[] = [];
  const turns: { role: 'user' | 'model'; parts: Part[] }[] = [];
  const names = new Map<string, string>();
  const push = (role: 'user' | 'model', parts: Part[]) => {
    if (parts.length === 0) return;
    const last = turns.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else turns.push({ role, parts });
  };
  for (const m of messages) {
    const text = m.content ?? '';
    if (m.role === 'system') {
      if (text !== '') system.push(text);
    } else if (m.role === 'tool') {
      const id = m.tool_call_id ?? '';
      push('user', [{ functionResponse: { id, name: names.get(id) ?? '', response: { output: text } } }]);
    } else if (m.role === 'assistant') {
      const parts: Part[] = text !== '' ? [{ text }] : [];
      for (const c of m.tool_calls ?? []) {
        names.set(c.id, c.function.name);
        parts.push({
          functionCall: { id: c.id, name: c.function.name, args: toolInput(c.function.arguments) },
        });
      }
      push('model', parts);
    } else if (text !== '') push('user', [{ text }]);
  }
  return {
    ...(system.length > 0 ? { systemInstruction: { parts: [{ text: system.join('\n\n') }] } } : {}),
    contents: turns,
    ...(tools.length > 0
      ? {
          tools: [
            {
              functionDeclarations: tools.map((t) => ({
                name: t.function.name,
                ...(t.function.description ? { description: t.function.description } : {}),
                parametersJsonSchema: t.function.parameters ?? { type: 'object', properties: {} },
              })),
            },
          ],
        }
      : {}),
  };
}

/** The part of a Gemini response read (from the upstream API: parsed, never cast). */
const GeminiResponse = z.looseObject({
  candidates: z
    .array(z.looseObject({ content: z.looseObject({ parts: z.array(GeminiPart).optional() }).optional() }))
    .optional(),
  usageMetadata: z
    .looseObject({
      promptTokenCount: z.number().optional(),
      candidatesTokenCount: z.number().optional(),
      totalTokenCount: z.number().optional(),
    })
    .optional(),
});

/** A Gemini response as a Chat assistant message and Chat-shaped usage. */
export function chatFromGeminiResponse(
  response: Record<string, unknown>,
  /** Prefix of the ids given to calls the API sent without one (unique per step). */
  idPrefix = 'call',
): ChatReply {
  const parsed = GeminiResponse.safeParse(response);
  const parts = (parsed.success ? parsed.data.candidates?.[0]?.content?.parts : undefined) ?? [];
  const text = parts.flatMap((p) => (p.text !== undefined && p.thought !== true ? [p.text] : [])).join('');
  const calls = parts
    .flatMap((p) => (p.functionCall ? [p.functionCall] : []))
    .map((fc, i) => ({
      id: fc.id !== undefined && fc.id !== '' ? fc.id : `${idPrefix}_${i + 1}`,
      type: 'function' as const,
      function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
    }));
  const u = parsed.success ? parsed.data.usageMetadata : undefined;
  return chatReply(
    text,
    calls,
    u && { prompt: u.promptTokenCount, completion: u.candidatesTokenCount, total: u.totalTokenCount },
  );
}
