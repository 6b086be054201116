import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelEndpoint, type ModelCall } from '../../electron/engine/external/model-endpoint.js';
import { chatFromAnthropicRequest } from '../../electron/engine/model-api/anthropic-messages.js';
import { continuationOptions, parseAgentSpec } from '../../electron/engine/agents/agent-spec.js';
import { createAgent } from '../../electron/engine/agent-factory.js';

// The Anthropic Messages API of the model endpoint, driven by the official SDK (what
// Claude Code is built on): streaming tool_use with input_json_delta, non-streaming,
// count_tokens, both auth headers, both base URLs.

const TOKEN = 'episode-token-anthropic';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function endpoint(): Promise<ModelEndpoint> {
  const e = new ModelEndpoint(TOKEN, 'stepbox-scripted');
  await e.start();
  closers.push(() => e.close());
  return e;
}

const BASH = {
  name: 'Bash',
  description: 'run a command',
  input_schema: {
    type: 'object' as const,
    properties: { command: { type: 'string' }, description: { type: 'string' } },
    required: ['command'],
  },
};

const ANSWER = {
  content: 'Running the tests.',
  tool_calls: [
    {
      id: 'toolu_1',
      type: 'function' as const,
      function: { name: 'Bash', arguments: '{"command":"python3 test_x.py","description":"run"}' },
    },
  ],
};

/** Answers the next call with `answer` and hands back the call. */
async function serve(e: ModelEndpoint, answer = ANSWER): Promise<ModelCall> {
  const call = await e.next();
  call.answer(answer, { prompt_tokens: 12, completion_tokens: 7 });
  return call;
}

describe('Anthropic Messages API on the model endpoint', () => {
  it('messages.create: the request arrives Chat-shaped, the answer is text + tool_use blocks', async () => {
    const e = await endpoint();
    const client = new Anthropic({ baseURL: e.anthropicUrl, apiKey: TOKEN, maxRetries: 0 });
    const [message, call] = await Promise.all([
      client.messages.create({
        model: 'stepbox-scripted',
        max_tokens: 1024,
        system: [{ type: 'text', text: 'You are terse.' }],
        tools: [BASH],
        messages: [
          { role: 'user', content: 'fix the tests' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Looking.' },
              { type: 'tool_use', id: 'toolu_0', name: 'Bash', input: { command: 'ls' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_0', content: [{ type: 'text', text: 'test_x.py' }] },
              { type: 'text', text: 'go on' },
            ],
          },
        ],
      }),
      serve(e),
    ]);
    expect(call.api).toBe('anthropic.messages');
    expect(call.raw.system).toEqual([{ type: 'text', text: 'You are terse.' }]);
    expect(call.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'fix the tests' },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          { id: 'toolu_0', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_0', content: 'test_x.py' },
      { role: 'user', content: 'go on' },
    ]);
    expect(call.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'Bash', description: 'run a command', parameters: BASH.input_schema },
      },
    ]);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'stepbox-scripted',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Running the tests.' },
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'Bash',
          input: { command: 'python3 test_x.py', description: 'run' },
        },
      ],
      usage: { input_tokens: 12, output_tokens: 7 },
    });
  });

  it('messages.stream(): tool_use streams as input_json_delta; each text arrives once; the final message is whole', async () => {
    const e = await endpoint();
    const client = new Anthropic({ baseURL: e.anthropicUrl, apiKey: TOKEN, maxRetries: 0 });
    const stream = client.messages.stream({
      model: 'stepbox-scripted',
      max_tokens: 1024,
      tools: [BASH],
      messages: [{ role: 'user', content: 'fix the tests' }],
    });
    const texts: string[] = [];
    const events: string[] = [];
    let json = '';
    stream.on('text', (t) => texts.push(t));
    stream.on('inputJson', (delta) => (json += delta));
    stream.on('streamEvent', (ev) => events.push(ev.type));
    const [final] = await Promise.all([stream.finalMessage(), serve(e)]);
    expect(texts).toEqual(['Running the tests.']);
    expect(JSON.parse(json)).toEqual({ command: 'python3 test_x.py', description: 'run' });
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'text', text: 'Running the tests.' },
      {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'Bash',
        input: { command: 'python3 test_x.py', description: 'run' },
      },
    ]);
  });

  it('a final answer ends the turn; the URL with /v1 works too, and a Bearer token (authToken)', async () => {
    const e = await endpoint();
    const client = new Anthropic({ baseURL: `${e.anthropicUrl}/v1`, authToken: TOKEN, maxRetries: 0 });
    const [final] = await Promise.all([
      client.messages
        .stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage(),
      serve(e, { content: 'All tests pass.' } as never),
    ]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content).toMatchObject([{ type: 'text', text: 'All tests pass.' }]);
  });

  it('models.list() names the served model', async () => {
    const e = await endpoint();
    const client = new Anthropic({ baseURL: e.anthropicUrl, apiKey: TOKEN, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['stepbox-scripted']);
  });

  it('count_tokens answers an estimate without making a model call', async () => {
    const e = await endpoint();
    const client = new Anthropic({ baseURL: e.anthropicUrl, apiKey: TOKEN, maxRetries: 0 });
    const counted = await client.messages.countTokens({
      model: 'm',
      messages: [{ role: 'user', content: 'x'.repeat(400) }],
    });
    expect(counted.input_tokens).toBeGreaterThan(90);
    // The answer came back already, so a call it made would be queued by now: none is.
    await expect(e.next(AbortSignal.timeout(100))).rejects.toThrow();
  });

  it('a wrong key is 401 and a bad body is 400, each in Anthropic error form', async () => {
    const e = await endpoint();
    const wrong = new Anthropic({ baseURL: e.anthropicUrl, apiKey: 'not-the-token', maxRetries: 0 });
    await expect(
      wrong.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({ status: 401 });
    const r = await fetch(`${e.anthropicUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': TOKEN, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'tool', content: 'x' }] }),
    });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    // The field by its path in the request, and what it may be.
    expect(body.error.message).toMatch(/messages\.0\.role: .*"user".*"assistant"/);
  });

  it('tool_result ids that answer no tool_use (unknown, duplicated, extra) are 400 like the real API, and make no model call', async () => {
    const e = await endpoint();
    const post = (messages: unknown[]) =>
      fetch(`${e.anthropicUrl}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': TOKEN,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'm', max_tokens: 8, tools: [BASH], messages }),
      });
    const use = (id: string) => ({ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } });
    const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
    const asked = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [use('toolu_a'), use('toolu_b')] },
    ];
    const cases: [string, unknown[], RegExp][] = [
      [
        'unknown',
        [...asked, { role: 'user', content: [result('toolu_a'), result('toolu_zz')] }],
        /messages\.2\.content\.1: unexpected `tool_use_id`.*"toolu_zz".*previous message \(its ids: "toolu_a", "toolu_b"\)/,
      ],
      [
        'duplicated',
        [...asked, { role: 'user', content: [result('toolu_a'), result('toolu_a')] }],
        /messages\.2\.content\.1: `tool_use_id` "toolu_a" is answered by more than one/,
      ],
      [
        'extra (a turn no tool_use precedes)',
        [{ role: 'user', content: [result('toolu_a')] }],
        /messages\.0\.content\.0: unexpected `tool_use_id`.*which has none/,
      ],
      [
        'extra (an older turn)',
        [
          ...asked,
          { role: 'user', content: [result('toolu_a'), result('toolu_b')] },
          { role: 'assistant', content: 'done?' },
          { role: 'user', content: [result('toolu_a')] },
        ],
        /messages\.4\.content\.0: unexpected/,
      ],
    ];
    for (const [what, messages, message] of cases) {
      const r = await post(messages);
      expect(r.status, what).toBe(400);
      const body = (await r.json()) as { type: string; error: { type: string; message: string } };
      expect(body, what).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(body.error.message, what).toMatch(message);
    }
    // The SDK sees the 400 as the real API's BadRequestError.
    const client = new Anthropic({ baseURL: e.anthropicUrl, apiKey: TOKEN, maxRetries: 0 });
    await expect(
      client.messages.create({
        model: 'm',
        max_tokens: 8,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: 'x' }] }],
      }),
    ).rejects.toMatchObject({ status: 400 });
    // None of them became a model call: the first call the agent's side takes is the valid one.
    const valid = [...asked, { role: 'user', content: [result('toolu_b'), result('toolu_a')] }];
    const [r, call] = await Promise.all([
      post(valid),
      serve(e, { content: 'done', tool_calls: [] } as never),
    ]);
    expect(r.status).toBe(200);
    expect((call.raw.messages as unknown[]).length).toBe(3);
  });
});

describe('Anthropic request conversion', () => {
  it('an error tool_result is marked, images are named, server tools dropped, tool_choice mapped, metadata left out, system blocks as paragraphs', () => {
    const body = chatFromAnthropicRequest({
      model: 'm',
      metadata: { user_id: 'session-1234' },
      system: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      ],
      tool_choice: { type: 'any' },
      tools: [BASH, { type: 'web_search_20250305', name: 'web_search' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
      ],
    });
    expect(body.metadata).toBeUndefined();
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are Claude Code.\n\nBe brief.' },
      { role: 'tool', tool_call_id: 't1', content: '[error] boom' },
      { role: 'user', content: '[image]' },
    ]);
    expect((body.tools as unknown[]).length).toBe(1);
    expect(body.tool_choice).toBe('required');
  });
});

describe('anthropic:MODEL@BASE_URL model source', () => {
  /** A fake Anthropic upstream: records each request (headers and body) and answers `answer`. */
  async function upstream(answer: Record<string, unknown>, status = 200) {
    const seen: { headers: Record<string, unknown>; body: Record<string, unknown>; url: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString()),
          url: req.url ?? '',
        });
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    closers.push(() => new Promise((r) => server.close(() => r())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
  }

  const KEY = 'sk-ant-host-SECRET-0123456789';

  it("forwards an Anthropic client's call upstream with the host key, never recorded; the answer comes back as tool_use", async () => {
    const up = await upstream({
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        { type: 'text', text: 'Listing.' },
        { type: 'tool_use', id: 'toolu_up', name: 'Bash', input: { command: 'ls' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 30, output_tokens: 9 },
    });
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = KEY;
    try {
      const source = createAgent(`anthropic:claude-x@${up.url}`, { retryBaseMs: 1 });
      expect(source.describe()).toMatchObject({ model: 'claude-x', base_url: up.url });
      const e = await endpoint();
      const client = new Anthropic({ baseURL: e.anthropicUrl, apiKey: TOKEN, maxRetries: 0 });
      const relay = async () => {
        const call = await e.next();
        const decision = await source.decide({
          step: 1,
          messages: call.body.messages as never,
          tools: call.body.tools as never,
        });
        expect(JSON.stringify(decision)).not.toContain(KEY);
        call.answer(decision.message as never, decision.usage);
        return decision;
      };
      const [final, decision] = await Promise.all([
        client.messages
          .stream({
            model: 'claude-x',
            max_tokens: 100,
            system: 'be brief',
            tools: [BASH],
            messages: [
              { role: 'user', content: 'list' },
              {
                role: 'assistant',
                content: [{ type: 'tool_use', id: 't0', name: 'Bash', input: { command: 'pwd' } }],
              },
              { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't0', content: '/workspace' }] },
            ],
          })
          .finalMessage(),
        relay(),
      ]);
      expect(up.seen).toHaveLength(1);
      expect(up.seen[0].url).toBe('/v1/messages');
      expect(up.seen[0].headers).toMatchObject({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01' });
      expect(up.seen[0].body).toMatchObject({
        model: 'claude-x',
        system: 'be brief',
        tools: [{ name: 'Bash', input_schema: BASH.input_schema }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'list' }] },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 't0', name: 'Bash', input: { command: 'pwd' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't0', content: '/workspace' }] },
        ],
      });
      expect(decision.usage).toEqual({ prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 });
      expect(final.content).toEqual([
        { type: 'text', text: 'Listing.' },
        { type: 'tool_use', id: 'toolu_up', name: 'Bash', input: { command: 'ls' } },
      ]);
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('an upstream refusal ends with model_error naming the endpoint, without retrying a 4xx', async () => {
    const up = await upstream(
      { type: 'error', error: { type: 'invalid_request_error', message: 'bad model' } },
      400,
    );
    const source = createAgent(`anthropic:nope@${up.url}/v1`, { retryBaseMs: 1 });
    await expect(
      source.decide({ step: 1, messages: [{ role: 'user', content: 'x' }], tools: [] }),
    ).rejects.toMatchObject({ endReason: 'model_error', message: expect.stringMatching(/bad model/) });
    expect(up.seen.map((s) => s.url)).toEqual(['/v1/messages']);
  });

  it('is a --model source of exec agents, and a recorded one continues only at its recorded endpoint', () => {
    expect(parseAgentSpec('anthropic:claude-x@http://127.0.0.1:9/')).toEqual({
      kind: 'anthropic',
      model: 'claude-x',
      baseUrl: 'http://127.0.0.1:9/',
    });
    expect(() => parseAgentSpec('anthropic:m@http://user:pw@h/')).toThrow(/credentials/);
    expect(createAgent('exec:true', { model: `anthropic:m@http://127.0.0.1:9` }).describe()).toMatchObject({
      model_source: 'anthropic:m@http://127.0.0.1:9',
    });
    expect(() => continuationOptions('anthropic:m', { kind: 'scripted' })).toThrow(/default endpoint/);
    expect(continuationOptions('anthropic:m', { kind: 'anthropic', base_url: 'http://h:1' })).toMatchObject({
      baseUrl: 'http://h:1',
    });
  });
});
