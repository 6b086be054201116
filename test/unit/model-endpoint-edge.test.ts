import { afterEach, describe, expect, it } from 'vitest';
import { ModelEndpoint, type ModelApi } from '../../electron/engine/external/model-endpoint.js';
import { MAX_MESSAGES } from '../../electron/engine/model-api/model-requests.js';

// Model requests come from agent code the engine does not trust (inside the sandbox, or a
// process of its own): each is parsed against its API's schema where it enters the endpoint.
// A hostile one is HTTP 400 in that API's own error form, naming the field and what was
// expected; it never becomes a model call, never crashes the endpoint, which goes on serving.

const TOKEN = 'episode-token-edge';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function endpoint(): Promise<{ e: ModelEndpoint; base: string }> {
  const e = new ModelEndpoint(TOKEN, 'm');
  await e.start();
  closers.push(() => e.close());
  return { e, base: e.anthropicUrl };
}

const PATHS: Record<ModelApi, string> = {
  'chat.completions': '/v1/chat/completions',
  responses: '/v1/responses',
  'anthropic.messages': '/v1/messages',
  gemini: '/v1beta/models/m:generateContent',
};

const GOOD: Record<ModelApi, Record<string, unknown>> = {
  'chat.completions': { model: 'm', messages: [{ role: 'user', content: 'go' }] },
  responses: { model: 'm', input: 'go' },
  'anthropic.messages': { model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'go' }] },
  gemini: { contents: [{ role: 'user', parts: [{ text: 'go' }] }] },
};

async function post(base: string, api: ModelApi, body: string): Promise<{ status: number; json: unknown }> {
  const r = await fetch(base + PATHS[api], {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  });
  return { status: r.status, json: await r.json() };
}

/** The error message in each API's own error body (and that the body is that API's shape). */
function messageOf(api: ModelApi, json: unknown): string {
  if (api === 'anthropic.messages') {
    expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    return (json as { error: { message: string } }).error.message;
  }
  if (api === 'gemini') {
    expect(json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    return (json as { error: { message: string } }).error.message;
  }
  expect(json).toMatchObject({ error: { type: 'invalid_request', code: 'invalid_request' } });
  return (json as { error: { message: string } }).error.message;
}

const huge = (item: unknown) => Array.from({ length: MAX_MESSAGES + 1 }, () => item);
const nested = (depth: number): unknown => (depth === 0 ? {} : { a: [nested(depth - 1)] });
const polluted = (api: ModelApi) =>
  JSON.stringify(GOOD[api]).replace(
    /^\{/,
    '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},',
  );

/** Per API: [what, body, the field and expectation the message must name]. */
const HOSTILE: Record<ModelApi, [string, unknown, RegExp][]> = {
  'chat.completions': [
    ['messages of the wrong type', { messages: 'hi' }, /messages: .*expected array/],
    ['no messages', { model: 'm' }, /messages: .*expected array/],
    ['a role that is none', { messages: [{ role: 'root', content: 'x' }] }, /messages\.0\.role: .*"user"/],
    ['content of the wrong type', { messages: [{ role: 'user', content: 7 }] }, /messages\.0\.content/],
    [
      'a tool call without its function',
      { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function' }] }] },
      /messages\.0\.tool_calls\.0\.function: .*expected object/,
    ],
    [
      'a function tool without a function',
      { ...GOOD['chat.completions'], tools: [{ type: 'function' }] },
      /tools\.0\.function/,
    ],
    ['a huge array', { messages: huge({ role: 'user', content: '' }) }, /messages: .*<=20000/],
    ['nested garbage', { messages: [{ role: 'user', content: [nested(40)] }] }, /messages\.0\.content/],
    ['stream not a boolean', { ...GOOD['chat.completions'], stream: 'yes' }, /stream: .*expected boolean/],
  ],
  responses: [
    ['input of the wrong type', { input: 42 }, /input/],
    ['no input', { model: 'm' }, /input/],
    ['an item of another role', { input: [{ role: 'root', content: 'x' }] }, /input\.0\.role/],
    [
      'a call whose arguments are no string',
      { input: [{ type: 'function_call', call_id: 'c', name: 'n', arguments: {} }] },
      /input\.0\.arguments: .*expected string/,
    ],
    [
      'previous_response_id',
      { input: 'go', previous_response_id: 'resp_1' },
      /previous_response_id: is not supported/,
    ],
    ['a huge array', { input: huge({ role: 'user', content: 'x' }) }, /input: .*<=20000/],
  ],
  'anthropic.messages': [
    ['messages of the wrong type', { messages: {} }, /messages: .*expected array/],
    [
      'a block without a type',
      { messages: [{ role: 'user', content: [{ text: 'x' }] }] },
      /messages\.0\.content/,
    ],
    [
      'a tool_choice of no kind',
      { ...GOOD['anthropic.messages'], tool_choice: { type: 'all' } },
      /tool_choice\.type/,
    ],
    [
      'a tool without a schema object',
      { ...GOOD['anthropic.messages'], tools: [{ name: 'x', input_schema: 'no' }] },
      /tools\.0\.input_schema/,
    ],
    ['a huge array', { messages: huge({ role: 'user', content: 'x' }) }, /messages: .*<=20000/],
    ['nested garbage', { messages: [{ role: 'user', content: nested(40) }] }, /messages\.0\.content/],
  ],
  gemini: [
    ['contents of the wrong type', { contents: 'hi' }, /contents: .*expected array/],
    ['a content without parts', { contents: [{ role: 'user' }] }, /contents\.0\.parts: .*expected array/],
    ['a role that is none', { contents: [{ role: 'root', parts: [] }] }, /contents\.0\.role/],
    [
      'a functionCall without a name',
      { contents: [{ role: 'model', parts: [{ functionCall: { args: {} } }] }] },
      /contents\.0\.parts\.0\.functionCall\.name/,
    ],
    ['a huge array', { contents: huge({ role: 'user', parts: [] }) }, /contents: .*<=20000/],
  ],
};

describe("model requests are parsed at the edge: hostile ones are 400 in the API's own form, the endpoint serves on", () => {
  for (const api of Object.keys(PATHS) as ModelApi[])
    it(`${api}: each hostile class is refused naming the field; a good request is still a model call`, async () => {
      const { e, base } = await endpoint();
      for (const [what, body, why] of HOSTILE[api]) {
        const r = await post(base, api, JSON.stringify(body));
        expect({ what, status: r.status }).toEqual({ what, status: 400 });
        expect(messageOf(api, r.json), what).toMatch(why);
      }
      // Prototype-pollution keys are data, kept where they were and changing no object.
      const pending = post(base, api, polluted(api));
      const call = await e.next();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getPrototypeOf(call.body)).toBe(Object.prototype);
      expect(call.messages.at(-1)).toMatchObject({ role: 'user', content: 'go' });
      call.answer({ content: 'done' });
      expect((await pending).status).toBe(200);
    });

  it('a body that is not JSON or not an object is 400 too', async () => {
    const { base } = await endpoint();
    for (const body of ['{', '[]', '"x"', 'null'])
      expect((await post(base, 'chat.completions', body)).status).toBe(400);
  });
});
