import type { ServerResponse } from 'node:http';
import type { AssistantAnswer, OutgoingAnswer } from './assistant-answer.js';
import { sendJson } from './local-http.js';
import { ChatRequest } from './model-requests.js';

/*
 * The Chat Completions API's answer, the form every other API (responses-api.ts,
 * anthropic-messages.ts, gemini-api.ts) is mapped onto: sent beside them, in the same shape.
 */

/** Why the answer stopped, in Chat's words. */
function finishReason(message: AssistantAnswer): string {
  return message.tool_calls && message.tool_calls.length > 0 ? 'tool_calls' : 'stop';
}

/** The usage reported when the model source gave none. */
const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** Answers a Chat Completions request, as one JSON body or as server-sent chunks. */
export function sendChatAnswer(res: ServerResponse, answer: OutgoingAnswer): void {
  const { id, model, message, stream, usage, request } = answer;
  const created = Math.floor(Date.now() / 1000);
  const used = usage && typeof usage === 'object' ? usage : NO_USAGE;
  const calls = message.tool_calls && message.tool_calls.length > 0 ? message.tool_calls : undefined;
  if (!stream) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: message.content, ...(calls ? { tool_calls: calls } : {}) },
          finish_reason: finishReason(message),
          logprobs: null,
        },
      ],
      usage: used,
    });
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null,
    extra: Record<string, unknown> = {},
  ) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`,
    );
  chunk({ role: 'assistant', content: message.content ?? '' }, null);
  for (const [index, c] of (calls ?? []).entries()) {
    chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: c.function }] }, null);
  }
  chunk({}, finishReason(message));
  const options = ChatRequest.shape.stream_options.safeParse(request.stream_options);
  if (options.success && options.data?.include_usage) {
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: used })}\n\n`,
    );
  }
  res.end('data: [DONE]\n\n');
}
