import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startEpisode } from '../../electron/engine/harness/index.js';
import { FakeOpenAi, wireCall } from '../support/fake-openai.js';
import { summarizeSteps } from '../../shared/step-summary.js';
import { memorySupply, memoryTask, ofType, tempHome } from '../support/harness.js';

const KEY = 'sk-test-SECRET-0123456789abcdef';
let env: ReturnType<typeof tempHome>;
let server: FakeOpenAi;
afterEach(async () => {
  env?.cleanup();
  await server?.close();
  delete process.env.OPENAI_API_KEY;
});

function traceText(path: string): string {
  const buf = readFileSync(path);
  return path.endsWith('.gz') ? gunzipSync(buf).toString('utf8') : buf.toString('utf8');
}

type AgentOptions = NonNullable<Parameters<typeof startEpisode>[0]['agentOptions']>;

/** An openai episode on the memory sandbox with no verifier; by default failing at the first refusal. */
function startOpenAi(
  baseUrl: string,
  options: AgentOptions = { retryBaseMs: 1, maxAttempts: 1 },
  spec = 'openai:m',
) {
  return startEpisode({
    task: memoryTask({ verifier: null }),
    agentSpec: spec,
    store: env.store,
    parts: env.parts,
    supply: memorySupply,
    agentOptions: { baseUrl, ...options },
  });
}

describe('openai agent against a fake chat-completions server', () => {
  it('records requests, usage, logprobs; an injected message reaches the next request; the key stays out', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    process.env.OPENAI_API_KEY = KEY;
    server.reply({
      message: { content: null, tool_calls: [wireCall('c1', 'execute_shell', { command: 'echo hi' })] },
    });
    server.onRequest = (req) => {
      if (server.requests.length !== 2) return undefined;
      const messages = req.body.messages as { role: string; content: string }[];
      const injected = messages.some(
        (m) => m.role === 'user' && m.content === 'It is raining in Beijing: recommend an umbrella.',
      );
      return { message: { content: injected ? 'Take an umbrella.' : 'NO INJECTION SEEN' } };
    };
    const c = await startOpenAi(baseUrl, { temperature: 0.2, seed: 7 }, 'openai:fake-model');
    await c.step();
    c.inject('user', 'It is raining in Beijing: recommend an umbrella.');
    await c.step();
    expect(c.ended()?.status).toBe('failed'); // no verifier
    const events = c.history();
    const final = ofType(events, 'action').at(-1);
    expect(final?.final).toBe('Take an umbrella.');
    const requests = ofType(events, 'model_request');
    expect(requests).toHaveLength(2);
    expect(requests[0].request).toMatchObject({
      model: 'fake-model',
      temperature: 0.2,
      seed: 7,
      logprobs: true,
      top_logprobs: 5,
    });
    expect(server.requests[1].body).toEqual(requests[1].request);
    const out = ofType(events, 'model_output')[0];
    expect(out.usage).toMatchObject({ total_tokens: 49 });
    // The endpoint's id, model and finish reasons are recorded (the OTel export's gen_ai.response.*).
    expect(out.response).toMatchObject({ id: expect.stringMatching(/^chatcmpl-/), model: 'fake-model' });
    expect(out.response?.finish_reasons?.length).toBe(1);
    // The top-5 logprobs the endpoint returned are recorded as it sent them.
    expect(out.logprobs).toMatchObject({
      content: [{ logprob: -0.1, top_logprobs: [{ token: 'a' }, { token: 'b' }] }],
    });
    expect(ofType(events, 'injected')[0]).toMatchObject({ source: 'injected', role: 'user', step: 1 });
    expect(server.requests[0].authorization).toBe(`Bearer ${KEY}`);
    await c.dispose();
    const trace = traceText(env.store.currentTracePath(env.store.resolve(c.branch)));
    expect(trace).not.toContain(KEY);
    expect(trace).not.toContain('SECRET');
  });

  it('retries 429/500 with backoff, then ends with model_error after the last attempt', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    server.reply(
      { status: 429, error: { message: 'slow down', type: 'rate_limit' } },
      { status: 500, error: { message: 'boom', type: 'server_error' } },
      { message: { content: 'done' } },
      { status: 503, error: { message: 'down', type: 'server_error' } },
    );
    const c = await startEpisode({
      task: memoryTask({ verifier: null }),
      agentSpec: 'openai:m',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl, retryBaseMs: 1, maxAttempts: 3 },
    });
    await c.step();
    expect(server.requests).toHaveLength(3);
    expect(c.ended()?.end_reason).toBe('final_answer');
    await c.dispose();

    server.reply(...Array.from({ length: 3 }, () => ({ status: 502, error: { message: 'bad gateway' } })));
    const d = await startEpisode({
      task: memoryTask(),
      agentSpec: 'openai:m',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl, retryBaseMs: 1, maxAttempts: 3 },
    });
    await d.step();
    expect(d.ended()).toMatchObject({ status: 'error', end_reason: 'model_error', verifier: null });
    await d.dispose();
  });

  it('an endpoint lost after two steps: the error is step 3’s, the call that failed (rows, `show` and the window read it there)', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    server.reply(
      { message: { content: null, tool_calls: [wireCall('c1', 'list_dir', { path: '.' })] } },
      { message: { content: null, tool_calls: [wireCall('c2', 'list_dir', { path: '.' })] } },
      { status: 502, error: { message: 'bad gateway' } },
    );
    const c = await startOpenAi(baseUrl);
    for (let i = 0; i < 3 && !c.ended(); i++) await c.step();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'model_error' });
    const history = c.history();
    // Recorded at step 2 (the last complete one), its "model failed" mark sat on step 2's row.
    expect(ofType(history, 'error').map((e) => e.step)).toEqual([3]);
    const steps = summarizeSteps(history);
    expect(steps.find((s) => s.step === 2)?.errors).toEqual([]);
    expect(steps.find((s) => s.step === 3)?.errors.map((e) => e.code)).toEqual(['model_error']);
    // Step 3 never ran: two steps done, the third unfinished (as `list`, `show` and the window count).
    expect(ofType(history, 'snapshot').map((e) => e.step)).toEqual([0, 1, 2]);
    await c.dispose();
  });

  it('an endpoint that is not up ends with model_error in one sentence, naming where its address is set', async () => {
    env = tempHome();
    // Port 1: nothing listens there (the client says "Connection error.").
    const c = await startOpenAi('http://127.0.0.1:1/v1');
    await c.step();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'model_error' });
    const message = ofType(c.history(), 'error')[0].message;
    expect(message).toMatch(
      /^the model endpoint http:\/\/127\.0\.0\.1:1\/v1 failed: Connection error\. Check /,
    );
    expect(message).not.toMatch(/\.\./);
    // Where the window and the CLI both set the address, not a flag one of them lacks.
    expect(message).not.toContain('--base-url');
    expect(message).toContain('openai:MODEL@URL');
    await c.dispose();
  });

  it('a context-length 400 ends the episode with context_overflow; refused logprobs are dropped', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    server.reply(
      {
        status: 400,
        error: { message: 'logprobs are not supported by this model', type: 'invalid_request_error' },
      },
      { message: { content: null, tool_calls: [wireCall('c1', 'execute_shell', { command: 'echo hi' })] } },
      {
        status: 400,
        error: {
          message: "This model's maximum context length is 8192 tokens",
          code: 'context_length_exceeded',
        },
      },
    );
    const c = await startEpisode({
      task: memoryTask(),
      agentSpec: 'openai:m',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl, retryBaseMs: 1 },
    });
    await c.run();
    expect(server.requests[1].body.logprobs).toBeUndefined();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'context_overflow' });
    await c.dispose();
  });

  it('contextPolicy drop_oldest replaces the oldest observations until the request fits', async () => {
    env = tempHome();
    server = new FakeOpenAi();
    const baseUrl = await server.start();
    server.onRequest = (req) => {
      const messages = req.body.messages as { role: string; content: string }[];
      if (server.requests.length === 1)
        return {
          message: { content: null, tool_calls: [wireCall('c1', 'execute_shell', { command: 'echo big' })] },
        };
      const fits = messages.some((m) => m.content === '[observation dropped to fit the context window]');
      return fits
        ? { message: { content: 'fits now' } }
        : { status: 400, error: { message: 'context length exceeded', code: 'context_length_exceeded' } };
    };
    const c = await startEpisode({
      task: memoryTask({ verifier: null }),
      agentSpec: 'openai:m',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl, contextPolicy: 'drop_oldest' },
    });
    await c.run();
    expect(c.ended()).toMatchObject({ end_reason: 'final_answer' });
    const last = ofType(c.history(), 'model_request').at(-1)!.request as {
      messages: { role: string; content: string }[];
    };
    expect(last.messages.find((m) => m.role === 'tool')?.content).toBe(
      '[observation dropped to fit the context window]',
    );
    await c.dispose();
  });
});
