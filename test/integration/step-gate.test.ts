import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { TraceEvent } from '../../shared/trace-events.js';
import { startEpisode } from '../../electron/engine/harness/index.js';
import type { EpisodeRunner } from '../../electron/engine/harness/episode-runner.js';
import { runCli } from '../support/cli.js';
import { describeDocker, startExample, useDockerHome } from '../support/docker.js';
import { call, final, ofType, script, task } from '../support/harness.js';

const docker = useDockerHome();

const SHELL_TASK = task({
  name: 'stop-before-tool',
  goal: 'Write out.txt',
  tools: ['execute_shell', 'read_file', 'write_file'],
  verifier: { command: 'test -f out.txt' },
});

async function workspaceFile(c: EpisodeRunner, path: string): Promise<string | null> {
  const r = await c.sandbox()!.readFile(path);
  return r.ok ? new TextDecoder().decode(r.value) : null;
}

/** The messages of the model request recorded at `step` (an exec agent's exact request). */
function requestMessages(events: readonly TraceEvent[], step: number): unknown[] {
  const e = ofType(events, 'model_request').find((r) => r.step === step);
  if (!e) throw new Error(`no model_request at step ${step}`);
  return (e.request as { messages: unknown[] }).messages;
}

describeDocker('stops inside a step on Docker', () => {
  it('scripted: edited arguments are what runs in the sandbox; a replaced result never runs', async () => {
    const agent = script(docker.env.dir, 'gate.jsonl', [
      call('execute_shell', { command: 'echo agent > out.txt' }, 'c1'),
      call('execute_shell', { command: 'echo two > two.txt' }, 'c2'),
      final('done'),
    ]);
    const c = await startEpisode({
      task: SHELL_TASK,
      agentSpec: `scripted:${agent}`,
      ...docker.episode,
    });
    try {
      c.setStopPoints({ before_tool: true });
      const stop = await c.step();
      expect(stop).toMatchObject({ kind: 'before_tool', held: { step: 1 } });
      expect(stop.held?.calls[0].arguments).toEqual({ command: 'echo agent > out.txt' });
      c.editArguments('c1', { command: 'echo person > out.txt' });
      expect((await c.step()).kind).toBe('step');
      expect(await workspaceFile(c, 'out.txt')).toBe('person\n');

      expect((await c.step()).kind).toBe('before_tool');
      c.replaceResult('c2', { ok: true, exit_code: 0, stdout: 'pretend', duration_ms: 0, bytes: 7 });
      expect((await c.step()).kind).toBe('step');
      expect(await workspaceFile(c, 'two.txt')).toBeNull();

      c.setStopPoints({ before_tool: false });
      await c.run();
      expect(c.ended()?.status).toBe('succeeded');
      const events = docker.env.store.readTrace(docker.env.store.resolve(c.branch)).events;
      // The trace keeps what the model said and what the person changed, apart.
      expect(JSON.stringify(ofType(events, 'model_output')[0].message)).toContain('echo agent');
      expect(ofType(events, 'edit')[0]).toMatchObject({
        source: 'human',
        stage: 'before_tool',
        call_id: 'c1',
      });
      expect(ofType(events, 'tool_call').map((e) => e.arguments.command)).toEqual([
        'echo person > out.txt',
        'echo two > two.txt',
      ]);
      expect(ofType(events, 'tool_result')[1]).toMatchObject({ source: 'human', replaced: true });
    } finally {
      await c.dispose();
    }
  });

  it('exec agent: a request breakpoint stops before the answer; the agent process gets the edited answer and the replaced result', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    try {
      c.setBreakpoints([{ kind: 'request_match', pattern: 'three chores' }]);
      const atAnswer = await c.step();
      expect(atAnswer).toMatchObject({ kind: 'before_answer', held: { step: 1 } });
      expect(atAnswer.message).toMatch(/matches \/three chores\//);
      c.setBreakpoints([]);
      c.editAnswer({
        content: 'A person wrote this list.',
        tool_calls: [
          {
            id: 'call_1',
            function: {
              name: 'write_file',
              arguments: { path: 'notes/todo.txt', content: 'mop\nsweep\ndust\n' },
            },
          },
        ],
      });
      c.setStopPoints({ before_tool: true });
      expect((await c.step()).kind).toBe('before_tool');
      expect((await c.step()).kind).toBe('step');
      expect(await workspaceFile(c, 'notes/todo.txt')).toBe('mop\nsweep\ndust\n');

      // Step 2 (wc -l): stop before the tool, give its result instead.
      const atTool = await c.step();
      expect(atTool).toMatchObject({ kind: 'before_tool', held: { step: 2 } });
      // The agent's step-2 request holds the answer as the person edited it: it received that.
      const received = JSON.stringify(requestMessages(c.history(), 2));
      expect(received).toContain('A person wrote this list.');
      expect(received).toContain('mop\\\\nsweep');
      const callId = atTool.held!.calls[0].id;
      c.replaceResult(callId, {
        ok: true,
        exit_code: 0,
        stdout: '42 notes/todo.txt',
        duration_ms: 0,
        bytes: 17,
      });
      c.setStopPoints({ before_tool: false });
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded', steps: 3 });
      // The agent saw the given result in its next request.
      expect(JSON.stringify(requestMessages(c.history(), 3))).toContain('42 notes/todo.txt');
      const events = c.history();
      expect(ofType(events, 'edit')[0]).toMatchObject({ stage: 'before_answer', source: 'human' });
      expect(ofType(events, 'tool_result').find((r) => r.step === 2)).toMatchObject({ replaced: true });
    } finally {
      await c.dispose();
    }
  });

  it('exec agent: stop while held before a tool ends the episode without a hang', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    try {
      c.setStopPoints({ before_tool: true });
      expect((await c.step()).kind).toBe('before_tool');
      const t0 = Date.now();
      const end = await c.stop();
      expect(end).toMatchObject({ status: 'interrupted', end_reason: 'stopped' });
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(await workspaceFile(c, 'notes/todo.txt')).toBeNull();
    } finally {
      await c.dispose();
    }
  });

  it('CLI --step --stop-before tool: edit runs the edited command', async () => {
    const agent = script(docker.env.dir, 'cli-gate.jsonl', [
      call('execute_shell', { command: 'echo agent > out.txt' }, 'c1'),
      call('execute_shell', { command: 'cat out.txt' }, 'c2'),
      final('done'),
    ]);
    const taskPath = join(docker.env.dir, 'cli-task.json');
    (await import('node:fs')).writeFileSync(taskPath, JSON.stringify(SHELL_TASK));
    const run = await runCli(
      ['run', taskPath, '--agent', `scripted:${agent}`, '--step', '--stop-before', 'tool', '--json'],
      {
        env: { STEPBOX_HOME: docker.env.home },
        timeoutMs: 90_000,
        input: '\nedit {"command": "echo person > out.txt"}\n\nt\nc\n',
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('the agent wants to run: execute_shell {"command":"echo agent > out.txt"}');
    expect(run.stderr).toContain('(edited by you)');
    expect(run.stderr).toContain('stop before each tool runs: off');
    const summary = JSON.parse(run.stdout);
    const events = docker.env.store.readTrace(docker.env.store.resolve(summary.branch)).events;
    const results = ofType(events, 'tool_result');
    expect(results[1].result.stdout).toBe('person\n');
  });
});
