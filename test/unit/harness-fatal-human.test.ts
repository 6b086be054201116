import { afterEach, describe, expect, it } from 'vitest';
import { replayVerify } from '../../electron/engine/harness/index.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import {
  call,
  final,
  memorySupply,
  memoryTask,
  ofType,
  tempHome,
  startScripted,
} from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

describe('fatal errors and human commands (memory sandbox)', () => {
  it('a sandbox that dies ends the episode with error, its cause, the last tool payloads and the memory', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('memory_write', { key: 'k', value: 'v' }),
      call('execute_shell', { command: 'echo one' }),
      call('execute_shell', { command: 'echo two' }),
      final('never'),
    ]);
    await c.step();
    await c.step();
    await c.sandbox()!.destroy();
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'sandbox_lost', verifier: null });
    const error = ofType(c.history(), 'error').at(-1)!;
    expect(error.fatal).toBe(true);
    const context = error.context as {
      last_tool_payloads: { name: string }[];
      memory: Record<string, unknown>;
    };
    expect(context.memory).toEqual({ k: 'v' });
    expect(context.last_tool_payloads.map((p) => p.name)).toEqual([
      'memory_write',
      'execute_shell',
      'execute_shell',
    ]);
    await c.dispose();
  });

  it('a snapshot that fails in step 3 is a fatal error of step 3 (not of step 2, the last complete one)', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      call('execute_shell', { command: 'echo three > three.txt' }),
      final('never'),
    ]);
    await c.step();
    await c.step();
    const box = c.sandbox()!;
    box.snapshot = () =>
      Promise.reject(
        new SandboxFailure('snapshot_failed', 'the snapshot of the workspace could not be read'),
      );
    await c.run();
    expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'snapshot_failed', steps: 2 });
    const error = ofType(c.history(), 'error').at(-1)!;
    expect(error).toMatchObject({ step: 3, code: 'snapshot_failed', fatal: true });
    // Step 3's tool ran and is recorded at step 3, beside its error.
    expect(ofType(c.history(), 'tool_result').map((r) => r.step)).toEqual([1, 2, 3]);
    await c.dispose();
  });

  it('human commands are recorded between steps and re-applied by replay --verify', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'cat human.txt' }),
      call('write_file', { path: 'done.txt', content: 'ok' }),
      final('done'),
    ]);
    await c.step();
    // What the terminal does: the person's command runs in the sandbox, the hook reports it.
    await c.sandbox()!.exec({ command: 'echo typed > human.txt', timeoutMs: 5_000, fresh: true });
    c.recordHumanCommand({ command: 'echo typed > human.txt', cwd: '/workspace', exit_code: 0 });
    await c.run();
    expect(c.ended()?.status).toBe('succeeded');
    expect(ofType(c.history(), 'human_command')[0]).toMatchObject({ step: 1, source: 'human' });
    expect(ofType(c.history(), 'tool_result')[1].result.stdout).toBe('typed\n');
    await c.dispose();
    const report = await replayVerify({
      id: c.episode,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(report).toMatchObject({ diverged_at: null, workspace_diverged_at: null, verifier_match: true });
  });

  it('a command typed while a step runs is recorded at once, at the last complete step, and survives a stop right after', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      call('execute_shell', { command: 'echo three' }),
      final('done'),
    ]);
    await c.step();
    // The terminal's hook reports the command while step 2's tool runs (its own tick).
    const typed = new Promise<{ state: string; recorded: number[] }>((resolve) => {
      const off = c.onEvent((e) => {
        if (e.type !== 'tool_call' || e.step !== 2) return;
        off();
        queueMicrotask(() => {
          const state = c.state();
          c.recordHumanCommand({ command: 'echo typed > typed.txt', cwd: '/workspace', exit_code: 0 });
          resolve({ state, recorded: ofType(c.history(), 'human_command').map((h) => h.step) });
        });
      });
    });
    await c.step();
    // In the trace (and so the window) at once, at step 1 (snapshot 1 was the last taken): held
    // for the next step, it reached neither until step 3 began.
    expect(await typed).toEqual({ state: 'running', recorded: [1] });
    await c.stop();
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    expect(trace.events.filter((e) => e.type === 'human_command')).toMatchObject([
      { step: 1, source: 'human', command: 'echo typed > typed.txt' },
    ]);
    await c.dispose();
  });

  it('a command typed right after a rollback is recorded at once, in the branch that goes on (no step needed)', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('execute_shell', { command: 'echo one > one.txt' }),
      call('execute_shell', { command: 'echo two > two.txt' }),
      final('done'),
    ]);
    await c.step();
    await c.step();
    const before = c.branch;
    await c.rollbackTo(1);
    await c.sandbox()!.exec({ command: 'echo typed > typed.txt', timeoutMs: 5_000, fresh: true });
    c.recordHumanCommand({
      command: 'echo typed > typed.txt',
      cwd: '/workspace',
      exit_code: 0,
      files: ['typed.txt'],
    });
    // Recorded now, in the new branch's trace on disk: not held for a next step that may never come.
    expect(c.branch).not.toBe(before);
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    expect(trace.events.filter((e) => e.type === 'human_command')).toMatchObject([
      { step: 1, source: 'human', command: 'echo typed > typed.txt', files: ['typed.txt'] },
    ]);
    await c.dispose();
  });
});
