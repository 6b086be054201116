import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { call, final, memoryTask, startScripted, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

const lines = [
  call('execute_shell', { command: 'echo 1' }),
  call('execute_shell', { command: 'echo 2' }),
  final('ok'),
];

/** The events of a closed branch's trace. */
function closedTrace(episode: string) {
  return readTraceFile(env.store.currentTracePath(env.store.resolve(episode)));
}

describe('a branch closes once, whoever asks', () => {
  it('two stops at once (Ctrl+C racing a dispose) give one end event, not "trace … is already closed"', async () => {
    const runner = await startScripted(env, { task: memoryTask() }, lines);
    const [a, b] = await Promise.all([runner.stop(), runner.stop()]);
    expect(a).toEqual(b);
    expect(a.status).toBe('interrupted');
    await runner.dispose();
    const ends = closedTrace(runner.episode).events.filter((e) => e.type === 'end');
    expect(ends).toHaveLength(1);
  });

  it('a stop while the episode ends on its own waits for that end and returns it', async () => {
    const runner = await startScripted(env, { task: memoryTask() }, lines);
    // Stop as soon as the final answer's reward is recorded: the branch is closing then.
    let stopped: ReturnType<typeof runner.stop> | null = null;
    const off = runner.onEvent((e) => {
      if (e.type === 'reward' && e.final) stopped ??= runner.stop();
    });
    await runner.run();
    expect(stopped).not.toBeNull();
    const end = await stopped!;
    off();
    await runner.dispose();
    expect(end.status).not.toBe('interrupted');
    expect(closedTrace(runner.episode).events.filter((e) => e.type === 'end')).toHaveLength(1);
  });
});
