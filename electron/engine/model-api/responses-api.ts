import type { ServerResponse } from 'node:http';
import { contentText, type ResponsesRequest } from './model-requests.js';
import { sendJson } from './local-http.js';
import type { OutgoingAnswer } from './assistant-answer.js';

/**
 * The subset of the OpenAI Responses API that agent SDKs (the OpenAI Agents SDK's
 * default model) use, mapped onto Chat Completions so one recorder and one model
 * source serve both: `input` items become messages, function tools become tools, and
 * the answer goes back as `output` items. Stateless: `previous_response_id` is refused.
 */
export function chatFromResponsesRequest(request: ResponsesRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  if (typeof request.instructions === 'string' && request.instructions !== '') {
    messages.push({ role: 'system', content: request.instructions });
  }
  const input = request.input;
  if (typeof input === 'string') messages.push({ role: 'user', content: input });
  else {
    let calls: Record<string, unknown>[] | null = null;
    for (const it of input) {
      // A custom (freeform) tool's call carries its text as `input` (Codex's apply_patch).
      if (it.type === 'function_call' || it.type === 'custom_tool_call') {
        const args = it.type === 'function_call' ? it.arguments : JSON.stringify({ input: it.input ?? '' });
        const call = {
          id: it.call_id ?? '',
          type: 'function',
          function: { name: it.name ?? '', arguments: args ?? '' },
        };
        // Calls in a row are one assistant turn.
        if (calls) calls.push(call);
        else messages.push({ role: 'assistant', content: null, tool_calls: (calls = [call]) });
        continue;
      }
      if (it.type === 'function_call_output' || it.type === 'custom_tool_call_output') {
        messages.push({ role: 'tool', tool_call_id: it.call_id ?? '', content: contentText(it.output) });
        calls = null;
      } else if (it.role !== undefined) {
        const role = it.role === 'developer' ? 'system' : it.role;
        messages.push({ role, content: contentText(it.content) });
        calls = null;
      }
    }
  }
  const tools = request.tools
    ?.filter((t) => t.type === 'function')
    .map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(typeof t.description === 'string' ? { description: t.description } : {}),
        ...(t.parameters ? { parameters: t.parameters } : {}),
      },
    }));
  const { input: _i, instructions: _n, tools: _t, ...rest } = request;
  return { ...rest, messages, ...(tools ? { tools } : {}) };
}

/**
 * Answers a Responses request with the assistant answer as output items: one JSON body,
 * or the event sequence the SDKs accumulate (`responses.stream()`): each item is added
 * empty and filled by deltas, so the text arrives exactly once. The request's `tools`
 * and `tool_choice` are echoed, as the API does.
 */
export function sendResponsesAnswer(res: ServerResponse, answer: OutgoingAnswer): void {
  const { id, model, message, stream, request } = answer;
  const text = message.content ?? '';
  const part = (t: string) => ({ type: 'output_text', text: t, annotations: [], logprobs: [] });
  const output: Record<string, unknown>[] = [];
  if (message.content) {
    output.push({
      type: 'message',
      id: `msg_${id}`,
      status: 'completed',
      role: 'assistant',
      content: [part(text)],
    });
  }
  for (const c of message.tool_calls ?? []) {
    output.push({
      type: 'function_call',
      id: `fc_${c.id}`,
      call_id: c.id,
      name: c.function.name,
      arguments: c.function.arguments,
      status: 'completed',
    });
  }
  const response = {
    id: `resp_${id}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    model,
    output,
    output_text: text,
    parallel_tool_calls: request.parallel_tool_calls !== false,
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      total_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    },
  };
  if (!stream) {
    sendJson(res, 200, response);
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const { output_text: _t, ...pending } = response;
  send('response.created', { response: { ...pending, status: 'in_progress', output: [] } });
  send('response.in_progress', { response: { ...pending, status: 'in_progress', output: [] } });
  for (const [i, item] of output.entries()) {
    const at = { output_index: i, item_id: item.id };
    if (item.type === 'message') {
      send('response.output_item.added', {
        output_index: i,
        item: { ...item, status: 'in_progress', content: [] },
      });
      send('response.content_part.added', { ...at, content_index: 0, part: part('') });
      send('response.output_text.delta', { ...at, content_index: 0, delta: text, logprobs: [] });
      send('response.output_text.done', { ...at, content_index: 0, text, logprobs: [] });
      send('response.content_part.done', { ...at, content_index: 0, part: part(text) });
    } else {
      send('response.output_item.added', {
        output_index: i,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      send('response.function_call_arguments.delta', { ...at, delta: item.arguments });
      send('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
    }
    send('response.output_item.done', { output_index: i, item });
  }
  send('response.completed', { response });
  res.end();
}
