import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../electron/engine/agent-factory.js';
import { loadTask, replayVerify, startEpisode } from '../../electron/engine/harness/index.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { useDockerHome } from '../support/docker.js';
import { call, final, ofType, script, task } from '../support/harness.js';

const KEY = 'sk-harness-docker-SECRET-987654321';
const docker = useDockerHome();

beforeAll(() => {
  process.env.OPENAI_API_KEY = KEY;
});
afterAll(() => {
  delete process.env.OPENAI_API_KEY;
});

describe('harness on Docker', () => {
  it('hello-python: writes code, runs it, fails, fixes it, passes the verifier', async () => {
    const dir = resolve(PROJECT_ROOT, 'resources/tasks/hello-python');
    const t = loadTask(dir);
    if (!t.ok) throw new Error(t.error.message);
    const c = await startEpisode({
      task: t.value,
      taskPath: dir,
      agentSpec: `scripted:${dir}/agent.jsonl`,
      ...docker.episode,
    });
    try {
      await c.run();
      const results = ofType(c.history(), 'tool_result');
      const failedRun = results.find((r) => r.step === 3)!;
      expect(failedRun.result.exit_code).toBe(1);
      expect(failedRun.result.stderr).toMatch(/IndexError/);
      expect(results.find((r) => r.step === 6)!.result.stdout).toBe('Hello, World!\n');
      expect(c.ended()).toMatchObject({
        status: 'succeeded',
        end_reason: 'final_answer',
        verifier: { success: true, exit_code: 0 },
      });
      // No secret reaches the sandbox's environment.
      const envOut = await c.sandbox()!.exec({ command: 'env', timeoutMs: 10_000 });
      expect(envOut.stdout).toMatch(/HOME=/);
      expect(envOut.stdout).not.toContain(KEY);
      expect(envOut.stdout).not.toContain('OPENAI_API_KEY');
    } finally {
      await c.dispose();
    }
    const report = await replayVerify({
      id: c.episode,
      ...docker.episode,
    });
    expect(report).toMatchObject({ diverged_at: null, workspace_diverged_at: null, verifier_match: true });
    expect(report.steps).toHaveLength(8);
  });

  it('rollback to step 3 and a different continuation give a branch whose files and memory differ', async () => {
    const t = task({
      name: 'branches',
      goal: 'notes',
      verifier: { command: 'test -f done.txt' },
    });
    const main = script(docker.env.dir, 'main.jsonl', [
      call('write_file', { path: 'notes.txt', content: 'first\n' }),
      call('memory_write', { key: 'plan', value: 'A' }),
      call('execute_shell', { command: 'mkdir -p out && cd out && export PHASE=3' }),
      call('execute_shell', { command: 'echo planA > plan.txt' }),
      call('memory_write', { key: 'plan', value: 'A2' }),
      call('execute_shell', { command: 'touch /workspace/done.txt' }),
      final('A done'),
    ]);
    const alt = script(docker.env.dir, 'alt.jsonl', [
      call('execute_shell', { command: 'pwd && echo "$PHASE" && echo planB > plan.txt' }),
      call('memory_write', { key: 'plan', value: 'B' }),
      call('execute_shell', { command: 'touch /workspace/done.txt' }),
      final('B done'),
    ]);
    const c = await startEpisode({
      task: t,
      agentSpec: `scripted:${main}`,
      ...docker.episode,
    });
    try {
      await c.run();
      const original = c.branch;
      expect(c.memory()).toEqual({ plan: 'A2' });
      await c.rollbackTo(3);
      expect(c.memory()).toEqual({ plan: 'A' });
      const gone = await c.sandbox()!.readFile('out/plan.txt');
      expect(gone.ok).toBe(false);
      c.useAgent(createAgent(`scripted:${alt}`));
      await c.run();
      expect(c.branch).not.toBe(original);
      expect(c.ended()?.status).toBe('succeeded');
      const first = ofType(c.history(), 'tool_result').find((r) => r.step === 4)!;
      expect(first.result.stdout).toBe('/workspace/out\n3\n');
      const plan = await c.sandbox()!.readFile('out/plan.txt');
      expect(plan.ok && Buffer.from(plan.value).toString()).toBe('planB\n');
      expect(c.memory()).toEqual({ plan: 'B' });
      const origTrace = docker.env.store.readTrace(docker.env.store.resolve(original));
      const origPlan = ofType(origTrace.events, 'memory_write').at(-1);
      expect(origPlan?.after).toBe('A2');
      const snaps = (id: string) =>
        ofType(docker.env.store.readTrace(docker.env.store.resolve(id)).events, 'snapshot').at(-1)!.tree_hash;
      expect(snaps(c.branch)).not.toBe(snaps(original));
    } finally {
      await c.dispose();
    }
  });

  it('replay --verify: no divergence for a deterministic episode, exactly the step of `date +%s%N`', async () => {
    const t = task({ name: 'replay', goal: 'replay', verifier: { command: 'grep -q ok out.txt' } });
    const agent = script(docker.env.dir, 'replay.jsonl', [
      call('execute_shell', { command: 'echo ok > out.txt && hostname && echo "$HOME $TZ $LANG"' }),
      call('execute_shell', { command: 'python3 -c "print(sum(range(10)))"' }),
      call('execute_shell', { command: 'date +%s%N' }),
      call('execute_shell', { command: 'cat out.txt' }),
      final('done'),
    ]);
    const c = await startEpisode({
      task: t,
      agentSpec: `scripted:${agent}`,
      ...docker.episode,
    });
    await c.run();
    expect(c.ended()?.status).toBe('succeeded');
    await c.dispose();
    const report = await replayVerify({
      id: c.branch,
      ...docker.episode,
    });
    expect(report.diverged_at).toBe(3);
    expect(report.diff).toEqual([expect.objectContaining({ name: 'execute_shell', field: 'stdout' })]);
    expect(report.steps.map((s) => s.verdict)).toEqual(['match', 'match', 'diverged', 'match', 'no_calls']);
    expect(report.workspace_diverged_at).toBeNull();
    expect(report.verifier_match).toBe(true);
  });
});
