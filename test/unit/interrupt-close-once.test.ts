import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { startEpisode } from '../../electron/engine/harness/index.js';
import { manualAgentOf } from '../../electron/engine/agents/manual-agent.js';
import { call, final, memorySupply, memoryTask, startScripted, tempHome } from '../support/harness.js';

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

  it('a run asked while a stop is under way starts no step: it returns once the stop closed the trace', async () => {
    // The CLI's loop asked again as soon as the stopped run returned, before the trace closed: a
    // manual agent then waited forever for a decision (its stop's abort already spent).
    const runner = await startEpisode({
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
      task: memoryTask(),
      agentSpec: 'manual',
    });
    const agent = manualAgentOf(runner.currentAgent());
    if (!agent) throw new Error('not a manual agent');
    // Each step the agent is asked to decide (asked, whether or not it then waits for a person).
    const asked: number[] = [];
    const decide = agent.decide.bind(agent);
    agent.decide = (input) => (asked.push(input.step), decide(input));
    const waiting = new Promise<void>((r) => agent.onWaiting(() => r()));
    const first = runner.run();
    await waiting;
    const stopping = runner.stop('input_ended');
    expect((await first).kind).toBe('ended');
    expect((await runner.run()).kind).toBe('ended');
    // It returned with the stop done: the trace is closed, so a loop `while (!ended()) run()` ends.
    expect(runner.ended()?.end_reason).toBe('input_ended');
    expect(asked).toEqual([1]);
    expect((await stopping).end_reason).toBe('input_ended');
    await runner.dispose();
    const ends = closedTrace(runner.episode).events.filter((e) => e.type === 'end');
    expect(ends.map((e) => e.type === 'end' && e.end_reason)).toEqual(['input_ended']);
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
