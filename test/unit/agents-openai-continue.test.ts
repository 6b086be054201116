import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { continuationOptions, parseAgentSpec } from '../../electron/engine/agents/agent-spec.js';
import { forkEpisode, resumeEpisode, startEpisode } from '../../electron/engine/harness/index.js';
import { FakeOpenAi, wireCall } from '../support/fake-openai.js';
import { final, memorySupply, memoryTask, ofType, startScripted, tempHome } from '../support/harness.js';

const KEY = 'sk-continue-SECRET-0123456789';
let env: ReturnType<typeof tempHome>;
let recorded: FakeOpenAi;
let fallback: FakeOpenAi;
afterEach(async () => {
  env?.cleanup();
  await recorded?.close();
  await fallback?.close();
  delete process.env.OPENAI_BASE_URL;
  delete process.env.OPENAI_API_KEY;
});

const shell = (id: string) => ({
  message: { content: null, tool_calls: [wireCall(id, 'execute_shell', { command: `echo ${id}` })] },
});

/**
 * An openai: episode recorded against `recorded` (temperature 0.3, seed 11), stopped
 * after step 1, with OPENAI_BASE_URL then pointing at another server: the "default"
 * endpoint a continuation must never fall back to.
 */
async function recordedEpisode(spec = 'openai:rec-model') {
  env = tempHome();
  recorded = new FakeOpenAi();
  fallback = new FakeOpenAi();
  const recordedUrl = await recorded.start();
  const fallbackUrl = await fallback.start();
  process.env.OPENAI_API_KEY = KEY;
  recorded.reply(shell('c1'));
  const c = await startEpisode({
    task: memoryTask({ verifier: null }),
    agentSpec: spec.includes('@') ? `${spec}${recordedUrl}` : spec,
    store: env.store,
    parts: env.parts,
    supply: memorySupply,
    agentOptions: {
      ...(spec.includes('@') ? {} : { baseUrl: recordedUrl }),
      temperature: 0.3,
      seed: 11,
      contextPolicy: 'drop_oldest',
    },
  });
  await c.step();
  await c.stop();
  await c.dispose();
  process.env.OPENAI_BASE_URL = fallbackUrl;
  fallback.onRequest = () => ({ message: { content: 'WRONG ENDPOINT' } });
  return { branch: c.branch, recordedUrl };
}

describe('continuing a recorded openai: episode', () => {
  it('resume reuses the recorded endpoint, model, temperature and seed, never the default endpoint', async () => {
    const { branch, recordedUrl } = await recordedEpisode();
    recorded.reply({ message: { content: 'resumed' } });
    const r = await resumeEpisode({ id: branch, store: env.store, parts: env.parts, supply: memorySupply });
    await r.run();
    expect(fallback.requests).toHaveLength(0);
    expect(recorded.requests.at(-1)?.body).toMatchObject({ model: 'rec-model', temperature: 0.3, seed: 11 });
    expect(ofType(r.history(), 'action').at(-1)?.final).toBe('resumed');
    expect(env.store.readTrace(env.store.resolve(r.branch)).header.agent).toMatchObject({
      base_url: recordedUrl,
      temperature: 0.3,
      seed: 11,
      context_policy: 'drop_oldest',
    });
    await r.dispose();
  });

  it('a fork with the parent agent, or with a new openai: model, goes to the recorded endpoint', async () => {
    const { branch } = await recordedEpisode();
    recorded.reply({ message: { content: 'same agent' } }, { message: { content: 'new model' } });
    const same = await forkEpisode({
      id: branch,
      at: 1,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await same.run();
    await same.dispose();
    const other = await forkEpisode({
      id: branch,
      at: 1,
      agentSpec: 'openai:other-model',
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await other.run();
    await other.dispose();
    expect(fallback.requests).toHaveLength(0);
    expect(recorded.requests.slice(-2).map((r) => [r.body.model, r.body.temperature, r.body.seed])).toEqual([
      ['rec-model', 0.3, 11],
      ['other-model', 0.3, 11],
    ]);
  });

  it('the caller may choose other settings explicitly', async () => {
    const { branch } = await recordedEpisode();
    fallback.onRequest = () => ({ message: { content: 'chosen' } });
    const f = await forkEpisode({
      id: branch,
      at: 1,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      agentOptions: { baseUrl: process.env.OPENAI_BASE_URL, temperature: 0 },
    });
    await f.run();
    await f.dispose();
    expect(fallback.requests[0].body).toMatchObject({ model: 'rec-model', temperature: 0, seed: 11 });
  });

  it('openai:MODEL@URL names the endpoint in the spec, and continuing keeps it', async () => {
    const { branch, recordedUrl } = await recordedEpisode('openai:rec-model@');
    const header = env.store.readTrace(env.store.resolve(branch)).header;
    expect(header.agent).toMatchObject({ spec: `openai:rec-model@${recordedUrl}`, base_url: recordedUrl });
    recorded.reply({ message: { content: 'resumed' } });
    const r = await resumeEpisode({ id: branch, store: env.store, parts: env.parts, supply: memorySupply });
    await r.run();
    await r.dispose();
    expect(fallback.requests).toHaveLength(0);
    expect(recorded.requests.at(-1)?.body).toMatchObject({ model: 'rec-model', temperature: 0.3 });
    // The key reached the endpoint and never the trace.
    expect(recorded.requests[0].authorization).toBe(`Bearer ${KEY}`);
    for (const id of [branch, r.branch]) {
      const path = env.store.currentTracePath(env.store.resolve(id));
      const buf = readFileSync(path);
      const text = path.endsWith('.gz') ? gunzipSync(buf).toString('utf8') : buf.toString('utf8');
      expect(text).not.toContain('SECRET');
    }
  });

  it('an openai: fork of a non-openai episode without an endpoint is refused, saying how to name one', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask({ verifier: null }) }, [final('done')]);
    await c.run();
    await c.dispose();
    await expect(
      forkEpisode({
        id: c.branch,
        at: 0,
        agentSpec: 'openai:m',
        store: env.store,
        parts: env.parts,
        supply: memorySupply,
      }),
    ).rejects.toMatchObject({
      endReason: 'bad_agent_spec',
      message: expect.stringMatching(/default endpoint.*openai:m@URL or --base-url URL/),
    });
  });
});

describe('an agent with no endpoint to go on at', () => {
  it('says it is the recorded agent when none was given (the window’s empty “Agent”), else the one given', () => {
    const recorded = { spec: 'openai:tiny-model', kind: 'openai' };
    expect(() => continuationOptions('openai:tiny-model', recorded)).toThrow(
      'The recorded agent openai:tiny-model has no endpoint, and a default endpoint is never used. Fix: --agent openai:tiny-model@URL or --base-url URL',
    );
    expect(() => continuationOptions('openai:other', recorded)).toThrow(
      'openai:other names no endpoint, and a recorded episode never goes on at a default endpoint. Fix: --agent openai:other@URL or --base-url URL',
    );
    // Recorded with its endpoint: it goes on there, no error.
    expect(
      continuationOptions('openai:tiny-model', { ...recorded, base_url: 'http://h:1/v1' }),
    ).toMatchObject({
      baseUrl: 'http://h:1/v1',
    });
  });
});

describe('the agent spec parser', () => {
  it('reads openai:MODEL@BASE_URL, models with colons and @ included', () => {
    expect(parseAgentSpec('openai:qwen2.5-coder:7b@http://127.0.0.1:11434/v1')).toEqual({
      kind: 'openai',
      model: 'qwen2.5-coder:7b',
      baseUrl: 'http://127.0.0.1:11434/v1',
    });
    expect(parseAgentSpec('openai:org@model')).toEqual({ kind: 'openai', model: 'org@model' });
    expect(parseAgentSpec('openai:m@https://api.deepseek.com/v1')).toMatchObject({
      baseUrl: 'https://api.deepseek.com/v1',
    });
  });

  it('refuses credentials in the URL (it is recorded; the key belongs in OPENAI_API_KEY)', () => {
    expect(() => parseAgentSpec('openai:m@https://user:sk-abc@host/v1')).toThrow(/OPENAI_API_KEY/);
  });
});
