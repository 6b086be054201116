import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAiTool } from '../../shared/tool-schemas.js';
import { agentEnvironment } from '../../electron/engine/external/agent-process.js';
import { McpHttpServer } from '../../electron/engine/external/mcp-server.js';
import { ModelEndpoint } from '../../electron/engine/external/model-endpoint.js';
import { firstDifference, requestDifference } from '../../electron/engine/external/fast-forward.js';

const TOKEN = 'episode-token-abc';
const TOOLS: OpenAiTool[] = [
  {
    type: 'function',
    function: {
      name: 'execute_shell',
      description: 'run',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  },
];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function model(): Promise<{ endpoint: ModelEndpoint; url: string }> {
  const endpoint = new ModelEndpoint(TOKEN, 'stepbox-scripted');
  const url = await endpoint.start();
  closers.push(() => endpoint.close());
  return { endpoint, url };
}

async function mcp(): Promise<{ url: string; calls: { name: string; args: unknown }[] }> {
  const calls: { name: string; args: unknown }[] = [];
  const server = new McpHttpServer(
    TOKEN,
    () => TOOLS,
    async (name, args) => {
      calls.push({ name, args });
      return { ok: true, exit_code: 0, stdout: `ran ${String(args.command)}`, duration_ms: 1, bytes: 4 };
    },
  );
  const url = await server.start();
  closers.push(() => server.close());
  return { url, calls };
}

/** A raw HTTP request (fetch would not let us forge the Host header). */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'POST', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      // The server may cut an oversized upload short; what it answered first is what counts.
      e.code === 'EPIPE' || e.code === 'ECONNRESET' ? resolve({ status: -1, body: e.code }) : reject(e),
    );
    req.end(options.body);
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const CHAT = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
const MCP_INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
});

describe('the episode servers refuse requests without the episode token', () => {
  const badAuth: Record<string, Record<string, string>> = {
    'no header': {},
    'another token': { authorization: 'Bearer episode-token-abd' },
    'a longer token': { authorization: `Bearer ${TOKEN}x` },
    'the token without Bearer': { authorization: TOKEN },
    'Basic auth': { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` },
    'an empty bearer': { authorization: 'Bearer ' },
  };
  for (const [what, headers] of Object.entries(badAuth)) {
    it(`model endpoint and MCP server: ${what} → 401, nothing reaches the handler`, async () => {
      const m = await model();
      const t = await mcp();
      const a = await raw(`${m.url}/chat/completions`, {
        headers: { ...JSON_HEADERS, ...headers },
        body: CHAT,
      });
      expect(a.status).toBe(401);
      expect(JSON.parse(a.body).error.message).toMatch(/STEPBOX_TOKEN/);
      const models = await raw(`${m.url}/models`, { method: 'GET', headers });
      expect(models.status).toBe(401);
      const b = await raw(t.url, { headers: { ...JSON_HEADERS, ...headers }, body: MCP_INIT });
      expect(b.status).toBe(401);
      expect(t.calls).toEqual([]);
    });
  }

  it('a foreign Host (a DNS-rebinding page) is refused even with the token', async () => {
    const m = await model();
    const r = await raw(`${m.url}/models`, {
      method: 'GET',
      headers: { authorization: `Bearer ${TOKEN}`, host: 'evil.example:80' },
    });
    expect(r.status).toBe(403);
  });

  it('a foreign Origin (another site in the browser) is refused 403 by both servers even with the token', async () => {
    const m = await model();
    const t = await mcp();
    const auth = { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` };
    const port = (url: string) => new URL(url).port;
    for (const origin of [
      'https://evil.example',
      'http://127.0.0.1:1',
      'null',
      `http://localhost.evil:${port(t.url)}`,
    ]) {
      const a = await raw(`${m.url}/chat/completions`, { headers: { ...auth, origin }, body: CHAT });
      expect(a.status, `model endpoint, Origin ${origin}`).toBe(403);
      expect(JSON.parse(a.body).error.message).toMatch(/Origin/);
      const b = await raw(t.url, { headers: { ...auth, origin }, body: MCP_INIT });
      expect(b.status, `MCP server, Origin ${origin}`).toBe(403);
    }
    expect(t.calls).toEqual([]);
    // The server's own origin, and no Origin at all (a CLI agent), pass the gate.
    const own = await raw(t.url, {
      headers: { ...auth, origin: `http://127.0.0.1:${port(t.url)}` },
      body: MCP_INIT,
    });
    expect(own.status).toBe(200);
    const models = await raw(`${m.url}/models`, {
      method: 'GET',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(models.status).toBe(200);
  });

  it('bodies over the bound are refused with 413, not buffered', async () => {
    const m = await model();
    const t = await mcp();
    const big = Buffer.alloc(17 * 1024 * 1024, 0x20);
    const a = await raw(`${m.url}/chat/completions`, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: big,
    });
    expect([413, -1]).toContain(a.status);
    const b = await raw(t.url, { headers: { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` }, body: big });
    expect([413, -1]).toContain(b.status);
    expect(t.calls).toEqual([]);
  });

  it('both servers listen on 127.0.0.1 only', async () => {
    const m = await model();
    const t = await mcp();
    expect(m.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(t.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });
});

describe('model endpoint', () => {
  it('answers the official client, streaming and not, with tool calls; lists its model', async () => {
    const m = await model();
    const client = new OpenAI({ baseURL: m.url, apiKey: TOKEN, maxRetries: 0 });
    const answer = {
      content: 'looking',
      tool_calls: [
        { id: 'call_1_1', type: 'function' as const, function: { name: 'ls', arguments: '{"path":"."}' } },
      ],
    };
    const serve = async () => {
      const call = await m.endpoint.next();
      call.answer(answer);
      return call;
    };
    const [plain, call] = await Promise.all([
      client.chat.completions.create({
        model: 'stepbox-scripted',
        messages: [{ role: 'user', content: 'hi' }],
      }),
      serve(),
    ]);
    expect(call.body.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(plain.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: answer });
    const [streamed] = await Promise.all([
      client.chat.completions
        .stream({ model: 'stepbox-scripted', messages: [{ role: 'user', content: 'hi' }] })
        .finalChatCompletion(),
      serve(),
    ]);
    expect(streamed.choices[0].message).toMatchObject(answer);
    expect((await client.models.list()).data.map((d) => d.id)).toEqual(['stepbox-scripted']);
  });

  it('serves the Responses API as output items', async () => {
    const m = await model();
    const client = new OpenAI({ baseURL: m.url, apiKey: TOKEN, maxRetries: 0 });
    const [response, call] = await Promise.all([
      client.responses.create({
        model: 'stepbox-scripted',
        instructions: 'be brief',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'a.txt' },
        ],
      }),
      m.endpoint.next().then((c) => {
        c.answer({ content: 'done' });
        return c;
      }),
    ]);
    expect(call.api).toBe('responses');
    expect(call.body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
    ]);
    expect(response.output_text).toBe('done');
  });

  it('responses.stream() sees each text once, the call arguments by delta, and the tools echoed', async () => {
    const m = await model();
    const client = new OpenAI({ baseURL: m.url, apiKey: TOKEN, maxRetries: 0 });
    const tools = [
      {
        type: 'function' as const,
        name: 'exec_command',
        description: 'run',
        parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
        strict: false,
      },
    ];
    const stream = client.responses.stream({ model: 'stepbox-scripted', input: 'fix it', tools });
    const deltas: string[] = [];
    const argDeltas: string[] = [];
    const types: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    stream.on('response.function_call_arguments.delta', (e) => argDeltas.push(e.delta));
    stream.on('event', (e) => types.push(e.type));
    const [final] = await Promise.all([
      stream.finalResponse(),
      m.endpoint.next().then((c) =>
        c.answer({
          content: 'Running it.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
          ],
        }),
      ),
    ]);
    expect(deltas).toEqual(['Running it.']);
    expect(argDeltas.join('')).toBe('{"cmd":"ls"}');
    expect(final.output_text).toBe('Running it.');
    expect(final.output).toMatchObject([
      { type: 'message', content: [{ type: 'output_text', text: 'Running it.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
    ]);
    expect(final.tools).toEqual(tools);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('after the episode ends every call gets a clear episode_ended error', async () => {
    const m = await model();
    m.endpoint.end('max_steps');
    const r = await raw(`${m.url}/chat/completions`, {
      headers: { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: CHAT,
    });
    expect(r.status).toBe(409);
    expect(JSON.parse(r.body).error).toMatchObject({ code: 'episode_ended' });
    expect(JSON.parse(r.body).error.message).toMatch(/max_steps/);
  });

  it('malformed requests get a 400 naming what is wrong', async () => {
    const m = await model();
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` };
    for (const [body, pattern] of [
      ['{', /not JSON/],
      ['[1]', /JSON object/],
      ['{"model":"m"}', /messages: .*expected array/],
    ] as const) {
      const r = await raw(`${m.url}/chat/completions`, { headers, body });
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error.message).toMatch(pattern);
    }
  });
});

describe('MCP server', () => {
  it('lists the task tools and returns text, structuredContent and isError to the SDK client', async () => {
    const t = await mcp();
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(t.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name)).toEqual(['execute_shell']);
      expect(tools[0].inputSchema).toMatchObject({ required: ['command'] });
      const result = await client.callTool({ name: 'execute_shell', arguments: { command: 'ls' } });
      expect(result).toMatchObject({
        content: [{ type: 'text', text: 'ran ls' }],
        structuredContent: { ok: true, exit_code: 0, stdout: 'ran ls' },
        isError: false,
      });
      expect(t.calls).toEqual([{ name: 'execute_shell', args: { command: 'ls' } }]);
    } finally {
      await client.close();
    }
  });

  it('speaks streamable HTTP as the SDK server does: status codes, batches, notifications', async () => {
    const t = await mcp();
    const auth = { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` };
    const call = (id: number | string, command: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'execute_shell', arguments: { command } },
    });
    const post = (body: unknown, headers: Record<string, string> = auth) =>
      raw(t.url, { headers, body: typeof body === 'string' ? body : JSON.stringify(body) });

    const init = await post(MCP_INIT);
    expect(init.status).toBe(200);
    expect(JSON.parse(init.body)).toMatchObject({ id: 1, result: { serverInfo: { name: 'stepbox' } } });
    expect((await post(call(1, 'x'), { ...auth, accept: 'application/json' })).status).toBe(406);
    expect((await post(call(1, 'x'), { ...auth, 'content-type': 'text/plain' })).status).toBe(415);
    const notJson = await post('{nope');
    expect([notJson.status, JSON.parse(notJson.body).error.code]).toEqual([400, -32700]);
    expect((await post({ jsonrpc: '2.0', what: 1 })).status).toBe(400);
    const oldVersion = await post(call(1, 'x'), { ...auth, 'mcp-protocol-version': '1999-01-01' });
    expect(oldVersion.status).toBe(400);
    expect(oldVersion.body).toMatch(/Unsupported protocol version/);
    const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect([note.status, note.body]).toEqual([202, '']);
    // GET is a session's notification stream: it needs text/event-stream and a session id.
    expect(
      (await raw(t.url, { method: 'GET', headers: { ...auth, accept: 'application/json' } })).status,
    ).toBe(406);
    const sse = { ...auth, accept: 'text/event-stream' };
    expect((await raw(t.url, { method: 'GET', headers: sse })).status).toBe(400);
    expect(
      (await raw(t.url, { method: 'GET', headers: { ...sse, 'mcp-session-id': 'made-up' } })).status,
    ).toBe(404);
    expect((await raw(t.url, { method: 'PUT', headers: auth })).status).toBe(405);
    // A batch is answered as an array, each answer under its own id.
    const batch = await post([call('a', 'one'), call('b', 'two')]);
    expect(
      JSON.parse(batch.body).map((r: { id: string; result: { content: { text: string }[] } }) => [
        r.id,
        r.result.content[0].text,
      ]),
    ).toEqual([
      ['a', 'ran one'],
      ['b', 'ran two'],
    ]);
    // An unknown method is a JSON-RPC error with the caller's id.
    const unknown = JSON.parse((await post({ jsonrpc: '2.0', id: 9, method: 'no/such' })).body);
    expect(unknown).toMatchObject({ id: 9, error: { code: -32601 } });
  });

  it('two clients using the same request id at once each get their own answer; a cancel cannot cross', async () => {
    const release: (() => void)[] = [];
    let bothIn: () => void = () => undefined;
    const arrived = new Promise<void>((r) => (bothIn = r));
    const server = new McpHttpServer(
      TOKEN,
      () => TOOLS,
      async (_name, args) => {
        // Held until both calls are in, so they overlap inside the server.
        await new Promise<void>((r) => {
          release.push(r);
          if (release.length === 2) bothIn();
        });
        return { ok: true, exit_code: 0, stdout: String(args.command), duration_ms: 0, bytes: 1 };
      },
    );
    const url = await server.start();
    closers.push(() => server.close());
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` };
    const body = (command: string) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'tools/call',
        params: { name: 'execute_shell', arguments: { command } },
      });
    const a = raw(url, { headers, body: body('first') });
    const b = raw(url, { headers, body: body('second') });
    await arrived;
    // A client cancelling its request 0 cannot cancel another's (the server's own ids are not 0).
    const cancel = await raw(url, {
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0 } }),
    });
    expect(cancel.status).toBe(202);
    release.reverse().forEach((r) => r());
    const [ra, rb] = (await Promise.all([a, b])).map((r) => JSON.parse(r.body));
    expect([ra.id, ra.result.content[0].text]).toEqual([0, 'first']);
    expect([rb.id, rb.result.content[0].text]).toEqual([0, 'second']);
  });
});

describe('fast-forward comparison', () => {
  it('names the first differing field and ignores delivery options', () => {
    const a = { model: 'm', messages: [{ role: 'system', content: 'at 10:00' }], stream: false };
    const b = { model: 'm', messages: [{ role: 'system', content: 'at 10:01' }], stream: true };
    expect(requestDifference(a, b)).toEqual({
      field: 'messages[0].content',
      recorded: 'at 10:00',
      actual: 'at 10:01',
    });
    expect(
      requestDifference({ ...a, stream: true }, { ...a, stream_options: { include_usage: true } }),
    ).toBeNull();
    expect(firstDifference({ x: [1, 2] }, { x: [1] }, '')?.field).toBe('x[1]');
  });
});

describe('agent environment', () => {
  it('passes the contract and host basics, never Docker, the store or keys', () => {
    const env = agentEnvironment(
      { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_API_KEY: TOKEN },
      {
        PATH: '/usr/bin',
        HOME: '/home/u',
        DOCKER_HOST: 'tcp://x',
        STEPBOX_HOME: '/s',
        OPENAI_API_KEY: 'sk-user',
        ANTHROPIC_API_KEY: 'k',
        AWS_SECRET_ACCESS_KEY: 'a',
        SSH_AUTH_SOCK: '/a',
        NODE_OPTIONS: '--require /evil.js',
      },
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/u',
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      OPENAI_API_KEY: TOKEN,
    });
  });
});
