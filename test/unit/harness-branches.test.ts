import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../electron/engine/agent-factory.js';
import {
  forkEpisode,
  replayVerify,
  resumeEpisode,
  startEpisode,
} from '../../electron/engine/harness/index.js';
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

const main = [
  call('write_file', { path: 'a.txt', content: 'A' }),
  call('memory_write', { key: 'k', value: 'one' }),
  call('execute_shell', { command: 'mkdir sub && cd sub && export MARK=three' }),
  call('write_file', { path: 'b.txt', content: 'B' }),
  call('memory_write', { key: 'k', value: 'two' }),
  call('write_file', { path: 'done.txt', content: 'ok' }),
  final('done'),
];

async function readFile(
  c: { sandbox(): import('../../electron/engine/sandbox/sandbox.js').Sandbox | null },
  path: string,
) {
  const r = await c.sandbox()!.readFile(path);
  return r.ok ? Buffer.from(r.value).toString() : null;
}

describe('rollback, fork, resume, replay (memory sandbox)', () => {
  it('rollback to step 3 restores files, memory, conversation and session; continuing forks a branch', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    for (let i = 0; i < 5; i++) await c.step();
    expect(c.memory()).toEqual({ k: 'two' });
    expect(await readFile(c, 'b.txt')).toBe('B');
    const messagesAt3 = c.messages().length;
    await c.rollbackTo(3);
    expect(c.currentStep()).toBe(3);
    expect(c.memory()).toEqual({ k: 'one' });
    expect(await readFile(c, 'b.txt')).toBeNull();
    expect(await c.sandbox()!.sessionState()).toMatchObject({
      cwd: '/workspace/sub',
      env: { MARK: 'three' },
    });
    expect(c.messages().length).toBeLessThan(messagesAt3);
    const original = c.branch;
    // A different continuation: another script, starting at its first line.
    const alt = script(env.dir, 'alt.jsonl', [
      call('write_file', { path: '/workspace/c.txt', content: 'C' }),
      call('memory_write', { key: 'k', value: 'alt' }),
      call('write_file', { path: '/workspace/done.txt', content: 'ok' }),
      final('alt done'),
    ]);
    c.useAgent(createAgent(`scripted:${alt}`));
    await c.run();
    expect(c.branch).not.toBe(original);
    expect(c.ended()?.status).toBe('succeeded');
    expect(c.memory()).toEqual({ k: 'alt' });
    expect(await readFile(c, '/workspace/c.txt')).toBe('C');
    expect(await readFile(c, '/workspace/b.txt')).toBeNull();
    const info = env.store.resolve(c.branch);
    expect(info).toMatchObject({ parentBranch: original, forkStep: 3 });
    const parent = env.store.readTrace(env.store.resolve(original));
    expect(ofType(parent.events, 'rollback')[0]).toMatchObject({ to_step: 3, reason: 'user' });
    await c.dispose();
  });

  it('a rollback with branchNow makes its branch at once, paused at the step; the next step goes on in it', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    for (let i = 0; i < 3; i++) await c.step();
    const original = c.branch;
    const moved: string[] = [];
    c.onBranch((b) => moved.push(b));
    await c.rollbackTo(1, { branchNow: true });
    // No step taken: the new branch exists, under the one rolled back, which is closed as rolled back.
    expect(c.branch).not.toBe(original);
    expect(moved).toEqual([c.branch]);
    expect(c.state()).toBe('paused');
    expect(c.currentStep()).toBe(1);
    expect(env.store.resolve(c.branch)).toMatchObject({ parentBranch: original, forkStep: 1 });
    const parent = env.store.readTrace(env.store.resolve(original));
    expect(ofType(parent.events, 'end')[0]).toMatchObject({ end_reason: 'rolled_back_to_1' });
    const rolled = c.branch;
    await c.step();
    expect(c.branch).toBe(rolled);
    expect(c.currentStep()).toBe(2);
    await c.dispose();
  });

  it("a rollback to k says what of a person's it dropped: what came after snapshot k, by step; nothing kept", async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    await c.step();
    // After step 1: an override of its result, a message and a typed command (all after snapshot 1).
    c.overrideLastResult({ ok: true, stdout: 'overridden', duration_ms: 0, bytes: 10 });
    c.inject('user', 'read at step 2');
    c.recordHumanCommand({ command: 'ls' });
    await c.step();
    // After step 2: two messages, read at step 3.
    c.inject('user', 'one');
    c.inject('system', 'two');
    const reasons: unknown[] = [];
    c.onState((_state, reason) => reasons.push(reason));
    const from = c.branch;
    await c.rollbackTo(1, { branchNow: true });
    expect(reasons.at(-1)).toEqual({
      kind: 'paused',
      message: 'rolled back to step 1',
      rollback: { from, to_step: 1, dropped: { injected: [1, 2, 2], overridden: [1], typed: [1] } },
    });
    // Back to 2 of the new branch's own: what came after step 1 is inside snapshot 2, kept.
    await c.step();
    c.inject('user', 'after 2');
    await c.step();
    await c.rollbackTo(2, { branchNow: true });
    expect(reasons.at(-1)).toMatchObject({
      rollback: { to_step: 2, dropped: { injected: [2], overridden: [], typed: [] } },
    });
    await c.rollbackTo(2, { branchNow: true });
    // Nothing after snapshot 2 this time: nothing dropped.
    expect(reasons.at(-1)).toMatchObject({
      rollback: { to_step: 2, dropped: { injected: [], overridden: [], typed: [] } },
    });
    await c.dispose();
  });

  it('a fork without an agent continues the parent script after line K; replay --verify matches', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    await c.run();
    expect(c.ended()?.status).toBe('succeeded');
    await c.dispose();
    const f = await forkEpisode({
      id: c.episode,
      at: 4,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(f.currentStep()).toBe(4);
    expect(f.memory()).toEqual({ k: 'one' });
    await f.run();
    expect(f.ended()).toMatchObject({ status: 'succeeded', steps: 7 });
    expect(f.memory()).toEqual({ k: 'two' });
    const own = env.store.readTrace(env.store.resolve(f.branch));
    expect(ofType(own.events, 'action').map((a) => a.step)).toEqual([5, 6, 7]);
    await f.dispose();
    const report = await replayVerify({
      id: f.branch,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(report.diverged_at).toBeNull();
    expect(report.workspace_diverged_at).toBeNull();
    expect(report.verifier_match).toBe(true);
    expect(report.steps.map((s) => s.verdict)).toEqual([
      'match',
      'match',
      'match',
      'match',
      'match',
      'match',
      'no_calls',
    ]);
  });

  it('a fork of a fork before its fork point continues the agent that ran that step, where it was', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    await c.run();
    await c.dispose();
    // f: forked at 4 with another script, run to its end.
    const other = script(env.dir, 'other.jsonl', [
      call('write_file', { path: 'other.txt', content: 'O' }),
      final('other done'),
    ]);
    const f = await forkEpisode({
      id: c.episode,
      at: 4,
      agentSpec: `scripted:${other}`,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await f.run();
    await f.dispose();
    // Step 2 of f was the first script's: a fork there continues that script after its line 2,
    // not f's script (whose decisions start at step 5).
    const g = await forkEpisode({
      id: f.branch,
      at: 2,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(g.currentStep()).toBe(2);
    await g.run();
    expect(g.ended()).toMatchObject({ status: 'succeeded', steps: 7 });
    const actions = ofType(env.store.readTrace(env.store.resolve(g.branch)).events, 'action');
    expect(actions.map((a) => a.step)).toEqual([3, 4, 5, 6, 7]);
    expect(JSON.stringify(actions[0])).toContain('export MARK=three');
    expect(JSON.stringify(actions)).not.toContain('other.txt');
    await g.dispose();
  });

  it('resume continues a stopped episode on a new branch, skipping consumed script lines', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    await c.step();
    await c.step();
    await c.dispose();
    expect(c.ended()).toMatchObject({ status: 'interrupted', end_reason: 'stopped' });
    const r = await resumeEpisode({
      id: c.episode,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(r.currentStep()).toBe(2);
    await r.run();
    expect(r.ended()).toMatchObject({ status: 'succeeded', steps: 7 });
    expect(env.store.readTrace(env.store.resolve(r.branch)).header).toMatchObject({
      resume_of: c.episode,
      fork_step: 2,
    });
    await r.dispose();
  });

  it('after a rollback the same scripted agent re-decides step k+1 from line k+1', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    for (let i = 0; i < 4; i++) await c.step();
    await c.rollbackTo(1);
    await c.step();
    const last = ofType(c.history(), 'action').at(-1);
    expect(last?.step).toBe(2);
    expect(last?.calls[0]).toMatchObject({ name: 'memory_write', arguments: { key: 'k', value: 'one' } });
    await c.dispose();
  });

  it('replay:EPISODE plays back the recorded model outputs in step order', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, main);
    await c.run();
    await c.dispose();
    const r = await startEpisode({
      task: memoryTask(),
      agentSpec: `replay:${c.episode}`,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    await r.run();
    expect(r.ended()).toMatchObject({ status: 'succeeded', steps: 7 });
    const calls = (x: typeof c) =>
      ofType(x.history(), 'action').map((a) => a.calls.map((k) => k.name).join() || a.final);
    expect(calls(r)).toEqual(calls(c));
    await r.dispose();
  });
});
