import { afterEach, describe, expect, it } from 'vitest';
import { startEpisode } from '../../electron/engine/harness/episode-factory.js';
import {
  call,
  final,
  memorySupply,
  memoryTask,
  ofType,
  script,
  tempHome,
  startScripted,
} from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

describe('episode loop (memory sandbox)', () => {
  it('runs a scripted episode to success and records every step', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('write_file', { path: 'x.txt', content: 'one' }),
      call('execute_shell', { command: 'cat x.txt' }),
      call('memory_write', { key: 'seen', value: 'one' }),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    const stop = await c.run();
    expect(stop.kind).toBe('ended');
    const end = c.ended();
    expect(end?.status).toBe('succeeded');
    expect(end?.end_reason).toBe('final_answer');
    expect(end?.steps).toBe(5);
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    expect(ofType(trace.events, 'snapshot').map((s) => s.step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ofType(trace.events, 'tool_result')[1].result.stdout).toBe('one');
    expect(ofType(trace.events, 'memory_write')[0]).toMatchObject({
      key: 'seen',
      after: 'one',
      corruption: null,
    });
    expect(ofType(trace.events, 'reward').filter((r) => r.final)).toHaveLength(1);
    expect(trace.end?.verifier?.success).toBe(true);
    await c.dispose();
  });

  it('ends with error / script_exhausted when the script runs out', async () => {
    env = tempHome();
    const agent = script(env.dir, 'a.jsonl', [call('execute_shell', { command: 'echo hi' })]);
    const c = await startEpisode({
      task: memoryTask(),
      agentSpec: `scripted:${agent}`,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'script_exhausted', verifier: null });
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    // Step 2's, the decision the script could not give: a step with no snapshot, its events kept
    // apart (partial) as every view reads them, and not inherited by a fork at step 1.
    const error = ofType([...trace.events, ...(trace.partial ?? [])], 'error')[0];
    expect(error).toMatchObject({ fatal: true, step: 2 });
    expect(error.context).toMatchObject({ last_tool_payloads: [{ name: 'execute_shell' }], memory: {} });
    await c.dispose();
  });

  it('a failing setup command ends the episode with error / setup_failed naming it', async () => {
    env = tempHome();
    const agent = script(env.dir, 'a.jsonl', [final('never')]);
    const c = await startEpisode({
      task: memoryTask({ workspace: { files: {}, setup: ['false'] } }),
      agentSpec: `scripted:${agent}`,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'setup_failed', steps: 0 });
    expect(ofType(c.history(), 'error')[0].message).toMatch(/workspace\.setup\[0\] \(false\) failed/);
    await c.dispose();
  });
});
