import { afterEach, describe, expect, it } from 'vitest';
import { startEpisode } from '../../electron/engine/harness/index.js';
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

const slowTask = () =>
  memoryTask({
    tools: [
      'execute_shell',
      'write_file',
      'memory_read',
      'memory_write',
      {
        name: 'slow',
        description: 'slow lookup',
        command: 'echo partial > b.txt; sleep 5; echo late',
        fallback: 'None',
        writes_memory: { last: '' },
      },
    ],
    memory: { initial: { last: 'fresh' }, writers: { slow: ['last'] }, nullable: [] },
    timeouts: { tools: { default: 30 }, step_soft: 0.2, step_hard: 0.6, episode: 60 },
  });

describe('step timeouts and breakpoints (memory sandbox)', () => {
  it('hard timeout: fallback shown (fallback: true), memory corrupted by it, workspace rolled back; breakpoints fire', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: slowTask(), breakpoints: [{ kind: 'fallback' }] }, [
      call('write_file', { path: 'a.txt', content: 'A' }),
      call('slow', {}),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    const stop = await c.run();
    expect(stop).toMatchObject({ kind: 'breakpoint', breakpoint: { kind: 'fallback' } });
    expect(c.currentStep()).toBe(2);
    const events = c.history();
    const result = ofType(events, 'tool_result').at(-1)!;
    expect(result.result).toMatchObject({ ok: true, stdout: 'None', fallback: true });
    expect((result as unknown as { real: { error: { code: string } } }).real.error.code).toBe('timeout');
    const write = ofType(events, 'memory_write').at(-1)!;
    expect(write).toMatchObject({ key: 'last', before: 'fresh', after: 'None', writer: 'slow' });
    expect(write.corruption).toMatch(/overwritten/);
    expect(ofType(events, 'rollback').at(-1)).toMatchObject({ step: 2, to_step: 1, reason: 'hard_timeout' });
    const warning = ofType(events, 'warning').at(-1)!;
    expect(warning.code).toBe('soft_timeout');
    expect(
      c.messages().some((m) => m.role === 'user' && String(m.content).includes('soft step timeout')),
    ).toBe(true);
    const b = await c.sandbox()!.readFile('b.txt');
    expect(b.ok).toBe(false);
    c.setBreakpoints([{ kind: 'null_value' }]);
    await c.rollbackTo(1);
    const again = await c.step();
    expect(again).toMatchObject({ kind: 'breakpoint', breakpoint: { kind: 'null_value' } });
    await c.dispose();
  });

  it('breakpoints on step number, tool name, non-zero exit and repeated calls', async () => {
    env = tempHome();
    const same = call('execute_shell', { command: 'echo same' }, 'x');
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'exit 3' }),
      same,
      same,
      same,
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    c.setBreakpoints([{ kind: 'nonzero_exit' }]);
    expect(await c.run()).toMatchObject({ kind: 'breakpoint', message: 'execute_shell exited 3' });
    c.setBreakpoints([{ kind: 'repeat', count: 3 }]);
    expect(await c.run()).toMatchObject({ kind: 'breakpoint', breakpoint: { kind: 'repeat' } });
    expect(c.currentStep()).toBe(4);
    c.setBreakpoints([{ kind: 'tool', name: 'write_file' }]);
    // A tool breakpoint stops BEFORE the call runs (held as with a stop before the tools), not after it.
    expect(await c.run()).toMatchObject({
      kind: 'before_tool',
      breakpoint: { kind: 'tool', name: 'write_file' },
      message: 'step 5: write_file is about to run (breakpoint tool=write_file)',
    });
    expect(c.currentStep()).toBe(4);
    expect(ofType(c.history(), 'tool_call').some((e) => e.name === 'write_file')).toBe(false);
    c.setBreakpoints([{ kind: 'step', step: 99 }]);
    expect(await c.run()).toMatchObject({ kind: 'ended' });
    const rewards = ofType(c.history(), 'reward');
    expect(rewards.find((r) => r.step === 1)?.components.tool_error).toBeCloseTo(-0.1);
    expect(rewards.find((r) => r.step === 3)?.components.repeated_action).toBeCloseTo(-0.2);
    expect(rewards.at(-1)).toMatchObject({ final: true, components: { verifier: 1 } });
    await c.dispose();
  });

  it('max_steps ends the episode and the verifier decides; override shows the agent another result', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask({ max_steps: 2 }) }, [
      call('execute_shell', { command: 'echo real' }),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      call('execute_shell', { command: 'echo never' }),
    ]);
    await c.step();
    c.overrideLastResult({ ok: true, exit_code: 0, stdout: 'shown', duration_ms: 0, bytes: 5 });
    expect(c.messages().at(-1)?.content).toContain('shown');
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'max_steps', steps: 2 });
    const o = ofType(c.history(), 'override')[0];
    expect(o).toMatchObject({ source: 'injected', real: { stdout: 'real\n' }, shown: { stdout: 'shown' } });
    await c.dispose();
  });

  it('the episode timeout ends the episode with status timeout', async () => {
    env = tempHome();
    const c = await startScripted(
      env,
      {
        task: memoryTask({ timeouts: { tools: { default: 30 }, step_soft: 5, step_hard: 10, episode: 0.3 } }),
      },
      [
        call('execute_shell', { command: 'sleep 2' }),
        call('write_file', { path: 'done.txt', content: 'ok' }),
        final('done'),
      ],
    );
    const started = Date.now();
    await c.run();
    expect(Date.now() - started).toBeLessThan(1_800);
    expect(c.ended()).toMatchObject({ status: 'timeout', end_reason: 'episode_timeout', steps: 1 });
    // The episode budget cut the call: a plain timeout result, no fallback and no rollback.
    expect(ofType(c.history(), 'tool_result')[0].result).toMatchObject({
      ok: false,
      error: { code: 'timeout' },
    });
    expect(ofType(c.history(), 'rollback')).toHaveLength(0);
    await c.dispose();
  });

  it('calls after a hard timeout in the same step are answered as cancelled', async () => {
    env = tempHome();
    const two = {
      content: null,
      tool_calls: [
        { id: 'slow1', type: 'function', function: { name: 'slow', arguments: '{}' } },
        {
          id: 'next1',
          type: 'function',
          function: { name: 'execute_shell', arguments: '{"command":"echo never"}' },
        },
      ],
    };
    const agent = script(env.dir, 'a.jsonl', [two, final('done')]);
    const c = await startEpisode({
      task: slowTask(),
      agentSpec: `scripted:${agent}`,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await c.step();
    const results = ofType(c.history(), 'tool_result');
    expect(results.map((r) => r.call_id)).toEqual(['slow1', 'next1']);
    expect(results[1].result.error?.code).toBe('cancelled');
    const tools = c.messages().filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.tool_call_id)).toEqual(['slow1', 'next1']);
    await c.dispose();
  });
});
