import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GoogleGenAI, type Content, type FunctionDeclaration } from '@google/genai';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelEndpoint, type ModelCall } from '../../electron/engine/external/model-endpoint.js';
import { parseAgentSpec, continuationOptions } from '../../electron/engine/agents/agent-spec.js';
import { createAgent } from '../../electron/engine/agent-factory.js';
import { parseScript } from '../../electron/engine/agents/scripted-agent.js';

// The Gemini API of the model endpoint, driven by the official `@google/genai` SDK (what
// Gemini CLI is built on): generateContent with function calls, both streams (the SDK's
// `?alt=sse`, and the JSON array), countTokens, the three ways of sending the key.

const TOKEN = 'episode-token-gemini';
const MODEL = 'stepbox-scripted';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function endpoint(): Promise<ModelEndpoint> {
  const e = new ModelEndpoint(TOKEN, MODEL);
  await e.start();
  closers.push(() => e.close());
  return e;
}

function client(e: ModelEndpoint): GoogleGenAI {
  return new GoogleGenAI({ apiKey: TOKEN, httpOptions: { baseUrl: e.anthropicUrl } });
}

const SHELL: FunctionDeclaration = {
  name: 'run_shell_command',
  description: 'run a command',
  parametersJsonSchema: {
    type: 'object',
    properties: { command: { type: 'string' } },
    required: ['command'],
  },
};

const ANSWER = {
  content: 'Running it.',
  tool_calls: [
    {
      id: 'call_7',
      type: 'function' as const,
      function: { name: 'run_shell_command', arguments: '{"command":"echo hi > out.txt"}' },
    },
  ],
};

/** A conversation after one tool call: the model's functionCall, the agent's functionResponse. */
const HISTORY: Content[] = [
  { role: 'user', parts: [{ text: 'write out.txt' }] },
  {
    role: 'model',
    parts: [{ functionCall: { id: 'call_1', name: 'run_shell_command', args: { command: 'ls' } } }],
  },
  {
    role: 'user',
    parts: [
      { functionResponse: { id: 'call_1', name: 'run_shell_command', response: { output: 'a.txt\n' } } },
    ],
  },
];

async function serve(
  e: ModelEndpoint,
  answer: Parameters<ModelCall['answer']>[0] = ANSWER,
): Promise<ModelCall> {
  const call = await e.next();
  call.answer(answer, { prompt_tokens: 12, completion_tokens: 7 });
  return call;
}

describe('Gemini API on the model endpoint', () => {
  it('generateContent: the request arrives Chat-shaped (tool outputs as role tool), the answer is text + functionCall parts', async () => {
    const e = await endpoint();
    const [res, call] = await Promise.all([
      client(e).models.generateContent({
        model: MODEL,
        contents: HISTORY,
        config: { systemInstruction: 'You are terse.', tools: [{ functionDeclarations: [SHELL] }] },
      }),
      serve(e),
    ]);
    expect(call.api).toBe('gemini');
    expect(call.body.model).toBe(MODEL);
    expect(call.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'write out.txt' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'run_shell_command', arguments: '{"command":"ls"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt\n' },
    ]);
    expect(call.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'run_shell_command',
          description: 'run a command',
          parameters: SHELL.parametersJsonSchema,
        },
      },
    ]);
    expect(res.text).toBe('Running it.');
    expect(res.functionCalls).toEqual([
      { id: 'call_7', name: 'run_shell_command', args: { command: 'echo hi > out.txt' } },
    ]);
    expect(res.usageMetadata?.promptTokenCount).toBe(12);
  });

  it('generateContentStream (?alt=sse): the SDK assembles the text and the function call', async () => {
    const e = await endpoint();
    const stream = async () => {
      const parts: unknown[] = [];
      for await (const chunk of await client(e).models.generateContentStream({
        model: MODEL,
        contents: 'write out.txt',
        config: { tools: [{ functionDeclarations: [SHELL] }] },
      }))
        parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      return parts;
    };
    const [parts] = await Promise.all([stream(), serve(e)]);
    expect(parts).toEqual([
      { text: 'Running it.' },
      { functionCall: { id: 'call_7', name: 'run_shell_command', args: { command: 'echo hi > out.txt' } } },
    ]);
  });

  it('streamGenerateContent without alt=sse answers the JSON-array stream; countTokens answers an estimate', async () => {
    const e = await endpoint();
    const url = `${e.anthropicUrl}/v1beta/models/${MODEL}:streamGenerateContent`;
    const [res] = await Promise.all([
      fetch(url, {
        method: 'POST',
        headers: { 'x-goog-api-key': TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
      }),
      serve(e, { content: 'hello' }),
    ]);
    expect(res.headers.get('content-type')).toBe('application/json');
    const chunks = (await res.json()) as { candidates: { content: { parts: unknown[] } }[] }[];
    expect(chunks.map((c) => c.candidates[0].content.parts)).toEqual([[{ text: 'hello' }]]);
    const count = await client(e).models.countTokens({ model: MODEL, contents: 'how many tokens is this' });
    expect(count.totalTokens).toBeGreaterThan(0);
  });

  it('the key as x-goog-api-key, ?key= or Bearer is accepted; a wrong one is 401 in Google’s error shape', async () => {
    const e = await endpoint();
    const url = `${e.anthropicUrl}/v1beta/models/${MODEL}:countTokens`;
    const body = JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }] });
    const post = (u: string, headers: Record<string, string> = {}) =>
      fetch(u, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post(url, { 'x-goog-api-key': TOKEN })).status).toBe(200);
    expect((await post(`${url}?key=${TOKEN}`)).status).toBe(200);
    expect((await post(url, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await post(url, { 'x-goog-api-key': 'wrong' })).status).toBe(401);
    expect((await post(`${url}?key=wrong`)).status).toBe(401);
    const bad = await fetch(`${e.anthropicUrl}/v1beta/models/${MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: 'not an array' }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { status: string } }).error.status).toBe('INVALID_ARGUMENT');
  });

  it('a functionResponse without an id takes the id of the call of its name in the turn before', async () => {
    const e = await endpoint();
    const contents: Content[] = [
      { role: 'user', parts: [{ text: 'go' }] },
      {
        role: 'model',
        parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'b', response: { output: 'B' } } },
          { functionResponse: { name: 'a', response: { error: 'failed' } } },
        ],
      },
    ];
    const [, call] = await Promise.all([
      client(e).models.generateContent({ model: MODEL, contents }),
      serve(e),
    ]);
    const msgs = call.body.messages as {
      role: string;
      tool_call_id?: string;
      content: unknown;
      tool_calls?: { id: string }[];
    }[];
    expect(msgs[1].tool_calls?.map((c) => c.id)).toEqual(['call_1_0', 'call_1_1']);
    expect(msgs.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1_1', content: 'B' },
      { role: 'tool', tool_call_id: 'call_1_0', content: '[error] failed' },
    ]);
  });
});

describe('Gemini as a script line and as an upstream model source', () => {
  it('a scripted line in Gemini form (content or whole response) is a Chat answer; a call without an id gets call_LINE_N', () => {
    const lines = parseScript(
      [
        JSON.stringify({
          role: 'model',
          parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'echo hi' } } }],
        }),
        JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'done' }] } }] }),
      ].join('\n'),
      'g.jsonl',
    );
    expect(lines.map((l) => l.message)).toEqual([
      {
        content: null,
        tool_calls: [
          {
            id: 'call_1_1',
            type: 'function',
            function: { name: 'run_shell_command', arguments: '{"command":"echo hi"}' },
          },
        ],
      },
      { content: 'done' },
    ]);
  });

  it('gemini:MODEL@URL sends generateContent with x-goog-api-key (from GEMINI_API_KEY, not recorded) and reads function calls back', async () => {
    const seen: { url: string; key: unknown; body: Record<string, unknown> }[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', key: req.headers['x-goog-api-key'], body: JSON.parse(text) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            candidates: [
              {
                content: {
                  role: 'model',
                  parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'ls' } } }],
                },
                finishReason: 'STOP',
              },
            ],
            usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    closers.push(() => new Promise((r) => server.close(() => r())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect(parseAgentSpec(`gemini:gemini-2.5-pro@${base}`)).toEqual({
      kind: 'gemini',
      model: 'gemini-2.5-pro',
      baseUrl: base,
    });
    const saved = process.env.GEMINI_API_KEY;
    process.env.GEMINI_API_KEY = 'host-secret-key';
    try {
      const agent = createAgent(`gemini:gemini-2.5-pro@${base}`);
      const d = await agent.decide({
        step: 3,
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'c1',
                type: 'function',
                function: { name: 'run_shell_command', arguments: '{"command":"pwd"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: '/workspace' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'run_shell_command', description: 'run', parameters: { type: 'object' } },
          },
        ],
      });
      expect(seen[0].url).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
      expect(seen[0].key).toBe('host-secret-key');
      expect(seen[0].body.systemInstruction).toEqual({ parts: [{ text: 'sys' }] });
      expect(seen[0].body.contents).toEqual([
        { role: 'user', parts: [{ text: 'go' }] },
        {
          role: 'model',
          parts: [{ functionCall: { id: 'c1', name: 'run_shell_command', args: { command: 'pwd' } } }],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: '/workspace' } } },
          ],
        },
      ]);
      expect(d.message.tool_calls).toEqual([
        {
          id: 'call_3_1',
          type: 'function',
          function: { name: 'run_shell_command', arguments: '{"command":"ls"}' },
        },
      ]);
      expect(JSON.stringify(d.request)).not.toContain('host-secret-key');
      expect(agent.describe()).toMatchObject({ model: 'gemini-2.5-pro', base_url: base });
      // A recorded episode continues only at the endpoint it recorded.
      expect(continuationOptions('gemini:m', { kind: 'gemini', base_url: base })).toMatchObject({
        baseUrl: base,
      });
      expect(() => continuationOptions('gemini:m', { kind: 'openai' })).toThrow(/default endpoint/);
    } finally {
      if (saved === undefined) delete process.env.GEMINI_API_KEY;
      else process.env.GEMINI_API_KEY = saved;
    }
  });
});
