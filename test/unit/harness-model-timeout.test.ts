import { afterEach, describe, expect, it } from 'vitest';
import { startEpisode } from '../../electron/engine/harness/index.js';
import { FakeOpenAi, wireCall } from '../support/fake-openai.js';
import { memorySupply, memoryTask, ofType, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
let server: FakeOpenAi;
afterEach(async () => {
  env?.cleanup();
  await server?.close();
});

/** An openai: episode against the fake server with the given timeouts (seconds). */
async function start(timeouts: { step_hard: number; episode: number }, agent: Record<string, number> = {}) {
  env = tempHome();
  server = new FakeOpenAi();
  const baseUrl = await server.start();
  return startEpisode({
    task: memoryTask({
      verifier: null,
      timeouts: { step_soft: timeouts.step_hard, step_hard: timeouts.step_hard, episode: timeouts.episode },
    }),
    agentSpec: 'openai:m',
    store: env.store,
    parts: env.parts,
    supply: memorySupply,
    agentOptions: { baseUrl, ...agent },
  });
}

describe('a hung model endpoint is bounded by the step and episode timeouts', () => {
  it('a request that never answers ends the step within step_hard as error / model_timeout', async () => {
    const c = await start({ step_hard: 1, episode: 600 });
    server.reply({ hang: true });
    await c.step();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'model_timeout', verifier: null });
    const error = ofType(c.history(), 'error')[0];
    // Step 1's: the decision that failed is the step it would have made (recorded at step 0, the
    // setup's row carried the mark and `show` printed it under the setup).
    expect(error).toMatchObject({ code: 'model_timeout', fatal: true, step: 1 });
    expect(error.message).toMatch(/hard step timeout \(1 s, retries included\).*timeouts\.step_hard/);
    // The request was aborted, not left open behind the ended episode.
    await c.dispose();
    await expect.poll(() => server.abandoned).toBe(1);
  });

  it('retries count too: failing fast with a backoff longer than the step ends with model_timeout', async () => {
    const c = await start({ step_hard: 1, episode: 600 }, { retryBaseMs: 60_000, maxAttempts: 4 });
    server.reply({ status: 503, error: { message: 'overloaded' } });
    await c.step();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'model_timeout' });
    expect(server.requests).toHaveLength(1);
    await c.dispose();
  });

  it('a hang that outlasts the episode budget ends the episode as timeout / episode_timeout', async () => {
    const c = await start({ step_hard: 60, episode: 1 });
    server.reply({ hang: true });
    await c.step();
    expect(c.ended()).toMatchObject({ status: 'timeout', end_reason: 'episode_timeout' });
    await c.dispose();
  });

  it('a slow but answering model still works, and the step goes on to its tools', async () => {
    const c = await start({ step_hard: 30, episode: 600 });
    server.reply(
      { message: { content: null, tool_calls: [wireCall('c1', 'execute_shell', { command: 'echo hi' })] } },
      { message: { content: 'done' } },
    );
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'failed', end_reason: 'final_answer' });
    expect(ofType(c.history(), 'tool_result')[0].result).toMatchObject({ ok: true, stdout: 'hi\n' });
    await c.dispose();
  });
});
