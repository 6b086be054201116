import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { TraceEvent } from '../../shared/trace-events.js';
import { replayVerify } from '../../electron/engine/harness/replay-verify.js';
import { STDERR_TAIL_BYTES, STEP_OUTPUT_BYTES } from '../../electron/engine/external/agent-process.js';
import { ExecAgent } from '../../electron/engine/external/exec-agent.js';
import { exportBundle, importBundle } from '../../electron/engine/trace/bundle.js';
import { forkEpisode, loadTask, startEpisode } from '../../electron/engine/harness/index.js';
import type { EpisodeRunner } from '../../electron/engine/harness/episode-runner.js';
import { runCli, waitFor } from '../support/cli.js';
import { describeDocker, exampleDir, startExample, useDockerHome } from '../support/docker.js';
import { call, final, ofType, script, tempHome } from '../support/harness.js';

/** The three example agents, each run from its task folder as the README shows. */
const EXAMPLES = [
  { name: 'python-stdlib', command: 'python3 agent.py' },
  { name: 'ts-openai-loop', command: 'node ../../../dist/agents/ts-openai-loop/agent.js' },
  { name: 'ts-openai-agents', command: 'node ../../../dist/agents/ts-openai-agents/agent.js' },
] as const;

const docker = useDockerHome();

/** A task of our own in a fresh folder (the agent's cwd), for agents that are shell one-liners. */
function tempTask(body: Record<string, unknown>): { dir: string; path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-exec-task-'));
  const path = join(dir, 'task.json');
  writeFileSync(path, JSON.stringify({ name: 'exec-edge', goal: 'edge case', ...body }));
  return { dir, path, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function startTemp(path: string, command: string, model = 'manual'): Promise<EpisodeRunner> {
  const t = loadTask(path);
  if (!t.ok) throw new Error(t.error.message);
  return startEpisode({
    task: t.value,
    taskPath: path,
    agentSpec: `exec:${command}`,
    agentOptions: { model },
    ...docker.episode,
  });
}

/** Processes of group `pgid` that still run (zombies waiting for a reaper are dead). */
function livingInGroup(pgid: number): string[] {
  return execFileSync('ps', ['-eo', 'pgid=,stat=,comm='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([g, stat]) => Number(g) === pgid && !stat.startsWith('Z'))
    .map((cols) => cols.join(' '));
}

function requestAt(events: readonly TraceEvent[], step: number) {
  const e = ofType(events, 'model_request').find((r) => r.step === step);
  if (!e) throw new Error(`no model_request at step ${step}`);
  return e as typeof e & {
    request: { messages: { role: string; content: unknown; tool_call_id?: string }[] };
    injected: number;
  };
}

function errorOf(events: readonly TraceEvent[]) {
  const e = ofType(events, 'error').at(-1);
  return e as (typeof e & { context: Record<string, unknown> }) | undefined;
}

describeDocker('external agents (exec:) on Docker', () => {
  for (const ex of EXAMPLES) {
    it(`${ex.name}: runs to succeeded; a fork at 2 with another model fast-forwards and continues on snapshot 2`, async () => {
      const c = await startExample(docker, ex.name, ex.command);
      try {
        await c.run();
        expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 3 });
        expect(ofType(c.history(), 'tool_result').map((r) => r.name)).toEqual([
          'write_file',
          'execute_shell',
        ]);
        // The agent's tool calls were answered with the results the harness recorded.
        expect(JSON.stringify(requestAt(c.history(), 3).request.messages)).toContain('3 notes/todo.txt');
      } finally {
        await c.dispose();
      }
      const alt = script(docker.env.dir, `${ex.name}-alt.jsonl`, [
        call('execute_shell', { command: 'echo "feed the cat" >> notes/todo.txt && wc -l < notes/todo.txt' }),
        final('four chores now'),
      ]);
      // No agent given: the recorded command runs again, --model swaps what answers it.
      const f = await forkEpisode({
        id: c.episode,
        at: 2,
        ...docker.episode,
        agentOptions: { model: `scripted:${alt}` },
      });
      try {
        await f.run();
        // Verifier wants three lines: the fork's fourth makes it fail, which shows it ran on snapshot 2.
        expect(f.ended()).toMatchObject({ status: 'failed', end_reason: 'final_answer', steps: 4 });
        const own = docker.env.store.readTrace(docker.env.store.resolve(f.branch)).events;
        expect(docker.env.store.readTrace(docker.env.store.resolve(f.branch)).header.agent).toMatchObject({
          spec: `exec:${ex.command}`,
          model_source: `scripted:${alt}`,
        });
        // Steps 1..2 were answered from the recording, never re-executed in the fork.
        expect(ofType(own, 'tool_call').map((e) => e.step)).toEqual([3]);
        expect(ofType(own, 'tool_result')[0].result.stdout).toBe('4\n');
        // The new process was fast-forwarded: its step-3 request holds the recorded step-2 result.
        expect(JSON.stringify(requestAt(own, 3).request.messages)).toContain('3 notes/todo.txt');
      } finally {
        await f.dispose();
      }
    });
  }

  it('the MCP server serves the sandbox workspace as resources and tells a subscriber what a step changed', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    const agent = c.currentAgent() as ExecAgent;
    try {
      await c.step(); // step 1 writes notes/todo.txt
      const ep = agent.endpoints();
      if (!ep) throw new Error('the exec agent has no servers');
      const headers = {
        authorization: `Bearer ${ep.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      };
      const rpc = async (body: unknown, session?: string) => {
        const res = await fetch(ep.mcpUrl, {
          method: 'POST',
          headers: { ...headers, ...(session ? { 'mcp-session-id': session } : {}) },
          body: JSON.stringify(body),
        });
        return { session: res.headers.get('mcp-session-id'), body: (await res.text()) || '{}' };
      };
      const init = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      const session = init.session ?? '';
      expect(session).not.toBe('');
      const read = await rpc(
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'resources/read',
          params: { uri: 'file:///workspace/notes/todo.txt' },
        },
        session,
      );
      expect(JSON.parse(read.body).result.contents[0]).toEqual({
        uri: 'file:///workspace/notes/todo.txt',
        mimeType: 'text/plain',
        text: 'water the plants\nbuy bread\ncall grandma\n',
      });
      // The session's notification stream is open once its headers are back.
      const stream = await fetch(ep.mcpUrl, {
        headers: {
          authorization: headers.authorization,
          accept: 'text/event-stream',
          'mcp-session-id': session,
        },
      });
      expect(stream.status).toBe(200);
      await rpc(
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'resources/subscribe',
          params: { uri: 'file:///workspace/notes/todo.txt' },
        },
        session,
      );
      await c.step(); // step 2 starts: step 1's snapshot changed notes/todo.txt
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = '';
      while (!seen.includes('\n\n')) seen += (await reader.read()).value ?? '';
      expect(JSON.parse(/data: (.*)/.exec(seen)![1])).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'file:///workspace/notes/todo.txt' },
      });
      await reader.cancel();
    } finally {
      await c.dispose();
    }
  });

  it('stepping holds the agent on its tool call until the stepper continues; its output is kept per step', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    const agent = c.currentAgent() as ExecAgent;
    const live: string[] = [];
    c.onAgentOutput((chunk) => live.push(`${chunk.step}:${chunk.stream}:${chunk.data}`));
    try {
      await c.step();
      expect(ofType(c.history(), 'tool_result').map((r) => r.step)).toEqual([1]);
      await waitFor('the agent to call its tool', () => (agent.pendingToolCalls() === 1 ? true : null));
      expect(live.join('')).not.toContain('write_file -> ok');
      await c.step();
      // Printed once step 2 let the tool call return: step 2's output, live and in the trace.
      expect(live).toContain('2:stdout:write_file -> ok\n');
      await c.run();
      const outputs = ofType(c.history(), 'agent_output');
      expect(outputs.map((o) => [o.step, o.stdout])).toEqual([
        [2, 'write_file -> ok\n'],
        [3, 'execute_shell -> ok\nfinal answer: notes/todo.txt lists three chores.\n'],
      ]);
      expect(outputs[1]).toMatchObject({ source: 'agent', truncated: { stdout: false, stderr: false } });
    } finally {
      await c.dispose();
    }
  });

  it('stepbox run prints what the agent program writes as it writes it, marked as its own', async () => {
    const dir = exampleDir('python-stdlib');
    const run = await runCli(
      [
        'run',
        dir,
        '--agent',
        'exec:python3 agent.py',
        '--model',
        `scripted:${join(dir, 'model.jsonl')}`,
        '--json',
      ],
      { env: { STEPBOX_HOME: docker.env.home }, timeoutMs: 90_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    const marked = run.stderr.split('\n').filter((l) => l.startsWith('agent | '));
    expect(marked).toEqual([
      'agent | write_file -> ok',
      'agent | execute_shell -> ok',
      'agent | final answer: notes/todo.txt lists three chores.',
    ]);
    // stdout stays the one JSON document.
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'succeeded' });
  });

  it('an agent writing megabytes: each stream keeps its first 64 KiB per step and says it truncated', async () => {
    const t = tempTask({});
    // 4 MB of a 3-byte character on stdout (the cap falls inside one), a line on stderr.
    const c = await startTemp(
      t.path,
      `python3 -c "import sys; sys.stdout.write('€' * 1400000); sys.stderr.write('still here\\n')"`,
    );
    const live: { data: string; truncated: boolean }[] = [];
    c.onAgentOutput((chunk) => chunk.stream === 'stdout' && live.push(chunk));
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ end_reason: 'agent_exited' });
      const [out] = ofType(c.history(), 'agent_output');
      expect(out.bytes).toEqual({ stdout: 4_200_000, stderr: 11 });
      expect(out.truncated).toEqual({ stdout: true, stderr: false });
      expect(out.stderr).toBe('still here\n');
      // Whole characters only, within the cap.
      expect(Buffer.byteLength(out.stdout)).toBeLessThanOrEqual(STEP_OUTPUT_BYTES);
      expect(Buffer.byteLength(out.stdout)).toBeGreaterThan(STEP_OUTPUT_BYTES - 3);
      expect(out.stdout).toMatch(/^€+$/);
      // The window got the same kept text, and one chunk saying the rest was dropped.
      expect(live.map((l) => l.data).join('')).toBe(out.stdout);
      expect(live.filter((l) => l.truncated)).toHaveLength(1);
    } finally {
      await c.dispose();
      t.cleanup();
    }
  });

  it('an injection after step 2 is in the model request of step 3, recorded as injected', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    try {
      await c.step();
      await c.step();
      c.inject('user', 'The user adds: also buy milk.');
      await c.run();
      const r3 = requestAt(c.history(), 3);
      expect(r3.injected).toBe(1);
      expect(r3.request.messages.at(-1)).toEqual({ role: 'user', content: 'The user adds: also buy milk.' });
      expect(requestAt(c.history(), 2).request.messages.map((m) => m.content)).not.toContain(
        'The user adds: also buy milk.',
      );
    } finally {
      await c.dispose();
    }
  });

  it('an overridden tool result is what the agent gets; the trace keeps both', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    try {
      await c.step();
      await c.step();
      c.overrideLastResult({
        ok: true,
        exit_code: 0,
        stdout: '99 notes/todo.txt\n',
        duration_ms: 0,
        bytes: 18,
      });
      await c.run();
      const tool = requestAt(c.history(), 3).request.messages.find((m) => m.tool_call_id === 'call_2');
      expect(tool?.content).toBe('99 notes/todo.txt\n');
      expect(ofType(c.history(), 'override')[0]).toMatchObject({ real: { stdout: '3 notes/todo.txt\n' } });
    } finally {
      await c.dispose();
    }
  });

  it('a rollback restarts the agent and fast-forwards it to the step', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    try {
      await c.run();
      const first = c.branch;
      await c.rollbackTo(1);
      await c.run();
      expect(c.branch).not.toBe(first);
      expect(c.ended()).toMatchObject({ status: 'succeeded', steps: 3 });
      const own = docker.env.store.readTrace(docker.env.store.resolve(c.branch)).events;
      expect(ofType(own, 'tool_call').map((e) => e.step)).toEqual([2]);
      expect(JSON.stringify(requestAt(own, 2).request.messages)).toContain('wrote 40 bytes');
    } finally {
      await c.dispose();
    }
  });

  it('an agent that puts the time in its first message diverges at step 1 on fork', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py --stamp');
    await c.run();
    await c.dispose();
    expect(c.ended()?.status).toBe('succeeded');
    // The same agent continues with the recorded model source after its 2 lines.
    const f = await forkEpisode({
      id: c.episode,
      at: 2,
      ...docker.episode,
    });
    try {
      await f.run();
      expect(f.ended()).toMatchObject({ status: 'error', end_reason: 'diverged' });
      expect(errorOf(f.history())?.context).toMatchObject({ diverged_at: 1, field: 'messages[0].content' });
    } finally {
      await f.dispose();
    }
    // replay --verify of the agent itself finds the same.
    const replay = await replayVerify({
      ...docker.episode,
      id: c.episode,
      agentSpec: 'exec:python3 agent.py --stamp',
    });
    expect(replay).toMatchObject({ replayed: 'actions_and_program', verdict: 'diverged', diverged_at: 1 });
    expect(replay.diff).toContainEqual(
      expect.objectContaining({ kind: 'request_unanswerable', field: 'messages[0].content' }),
    );
  });

  it('one scripted JSONL answers an agent speaking Chat Completions, Responses or Anthropic Messages', async () => {
    const t = tempTask({ tools: ['execute_shell'] });
    const model = script(t.dir, 'model.jsonl', [
      call('execute_shell', { command: 'echo hi > a.txt && cat a.txt' }),
      final('done'),
    ]);
    const agent = join(exampleDir('python-stdlib'), 'agent.py');
    try {
      for (const [api, recorded] of [
        ['chat', 'chat.completions'],
        ['responses', 'responses'],
        ['anthropic', 'anthropic.messages'],
      ] as const) {
        const c = await startTemp(t.path, `python3 ${agent} --api ${api}`, `scripted:${model}`);
        try {
          await c.run();
          expect(c.ended(), api).toMatchObject({ end_reason: 'final_answer', steps: 2 });
          expect(ofType(c.history(), 'tool_result').map((r) => r.result.stdout)).toEqual(['hi\n']);
          const requests = ofType(c.history(), 'model_request') as unknown as {
            api: string;
            received?: Record<string, unknown>;
            request: { messages: { role: string; content: unknown }[] };
          }[];
          expect(requests.map((r) => r.api)).toEqual([recorded, recorded]);
          // Step 2's request carries step 1's tool output, in Chat form whatever the API.
          expect(requests[1].request.messages.at(-1)).toMatchObject({ role: 'tool', content: 'hi\n' });
          if (api !== 'chat') expect(requests[1].received).toBeDefined();
        } finally {
          await c.dispose();
        }
      }
    } finally {
      t.cleanup();
    }
  });

  it('fork --model without --agent: steps 1..2 with side effects run once, answered from the recording', async () => {
    const t = tempTask({ tools: ['execute_shell'] });
    const agent = `exec:python3 ${join(exampleDir('python-stdlib'), 'agent.py')}`;
    const bump = call('execute_shell', { command: 'echo ran >> ran.log && wc -l < ran.log' });
    const model = script(t.dir, 'model.jsonl', [bump, bump, final('twice')]);
    const c = await startTemp(t.path, agent.slice('exec:'.length), `scripted:${model}`);
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ end_reason: 'final_answer', steps: 3 });
      expect(ofType(c.history(), 'tool_result').map((r) => r.result.stdout)).toEqual(['1\n', '2\n']);
    } finally {
      await c.dispose();
    }
    const other = script(t.dir, 'other.jsonl', [
      call('execute_shell', { command: 'wc -l < ran.log' }),
      final('counted'),
    ]);
    const f = await forkEpisode({
      id: c.episode,
      at: 2,
      ...docker.episode,
      agentOptions: { model: `scripted:${other}` },
    });
    try {
      await f.run();
      expect(f.ended()).toMatchObject({ end_reason: 'final_answer', steps: 4 });
      const trace = docker.env.store.readTrace(docker.env.store.resolve(f.branch));
      expect(trace.header.agent).toMatchObject({ spec: agent, model_source: `scripted:${other}` });
      const own = trace.events;
      // Snapshot 2 holds two lines and nothing re-ran them: had steps 1..2 run again it would be 4.
      expect(ofType(own, 'tool_call').map((e) => e.step)).toEqual([3]);
      expect(ofType(own, 'tool_result')[0].result.stdout).toBe('2\n');
      // The new process got the recorded results of steps 1..2 (fast-forward), then step 3 live.
      const seen = requestAt(own, 3)
        .request.messages.filter((m) => m.role === 'tool')
        .map((m) => m.content);
      expect(seen).toEqual(['1\n', '2\n']);
    } finally {
      await f.dispose();
      t.cleanup();
    }
  });

  it("the window's fork of a live episode (no agent given) continues the recorded source after its K answers", async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    let f: EpisodeRunner | null = null;
    try {
      await c.run();
      f = (await c.fork(2)) as EpisodeRunner;
      await f.run();
      // Line 3 of the script answers step 3 (line 1 again would write the file once more).
      expect(f.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 3 });
      const own = docker.env.store.readTrace(docker.env.store.resolve(f.branch)).events;
      expect(ofType(own, 'tool_call')).toEqual([]);
      expect(ofType(own, 'model_output')[0].message).toMatchObject({
        content: 'notes/todo.txt lists three chores.',
      });
    } finally {
      await f?.dispose();
      await c.dispose();
    }
  });

  it('a command recorded in an imported bundle never runs by itself', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    await c.run();
    await c.dispose();
    const other = tempHome();
    try {
      const file = join(other.dir, 'ep.stepbox');
      await exportBundle(docker.env.store, c.episode, file);
      await importBundle(other.store, file);
      await expect(
        forkEpisode({ id: c.episode, at: 2, store: other.store, parts: other.parts, supply: docker.supply }),
      ).rejects.toThrow(
        /imported.*never runs a command from a bundle by itself.*--agent 'exec:python3 agent.py'/,
      );
      // Nor does replay --verify re-run it without the command given.
      await expect(
        replayVerify({ store: other.store, parts: other.parts, supply: docker.supply, id: c.episode }),
      ).rejects.toThrow(/imported.*never runs a command from a bundle by itself/);
      // Recorded here, the same fork runs the command again.
      expect(docker.env.store.imported(c.episode)).toBe(false);
    } finally {
      other.cleanup();
    }
  });

  it('replay --verify of a deterministic agent: every request and tool call as recorded', async () => {
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py');
    await c.run();
    await c.dispose();
    const replay = await replayVerify({
      ...docker.episode,
      id: c.episode,
      agentSpec: 'exec:python3 agent.py',
    });
    expect(replay).toMatchObject({
      replayed: 'actions_and_program',
      verdict: 'identical',
      diverged_at: null,
    });
    expect(replay.steps).toHaveLength(3);
    // Without --agent the recorded command is the one re-run (an episode recorded here).
    const recorded = await replayVerify({ ...docker.episode, id: c.episode });
    expect(recorded).toMatchObject({ verdict: 'identical', diverged_at: null });
    // A different program asks differently.
    const other = await replayVerify({
      ...docker.episode,
      id: c.episode,
      agentSpec: 'exec:node ../../../dist/agents/ts-openai-loop/agent.js',
    });
    expect(other.diverged_at).toBe(1);
    expect(other.diff?.map((d) => d.kind)).toContain('request_unanswerable');
  });

  it('replay --verify of an agent whose model once asked for a tool the task does not have: no false divergence', async () => {
    const dir = exampleDir('python-stdlib');
    const lines = readFileSync(join(dir, 'model.jsonl'), 'utf8').trim().split('\n');
    const unknown = JSON.stringify({
      content: null,
      tool_calls: [
        { id: 'call_x', type: 'function', function: { name: 'browse_web', arguments: { url: 'x' } } },
      ],
    });
    const model = join(docker.env.dir, 'unknown-tool.jsonl');
    writeFileSync(model, [lines[0], unknown, ...lines.slice(1)].join('\n') + '\n');
    const c = await startExample(docker, 'python-stdlib', 'python3 agent.py', `scripted:${model}`);
    await c.run();
    await c.dispose();
    expect(c.ended()?.status, JSON.stringify(c.ended())).toBe('succeeded');
    const replay = await replayVerify({
      ...docker.episode,
      id: c.episode,
      agentSpec: 'exec:python3 agent.py',
    });
    expect(replay).toMatchObject({ verdict: 'identical', diverged_at: null });
    expect(replay.steps).toHaveLength(4);
  });

  it('an agent that exits non-zero ends the episode as error / agent_exit with its stderr', async () => {
    const t = tempTask({});
    const c = await startTemp(t.path, 'echo "fatal: no config" >&2; exit 3');
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'agent_exit', verifier: null });
      const err = errorOf(c.history());
      expect(err?.message).toMatch(/exited with code 3/);
      expect(err?.context).toMatchObject({ exit_code: 3, stderr_tail: 'fatal: no config\n' });
    } finally {
      await c.dispose();
      t.cleanup();
    }
  });

  it('an agent killed by a signal (a crash) is agent_exit with the last 2 KiB of its stderr', async () => {
    const t = tempTask({});
    const c = await startTemp(
      t.path,
      `python3 -c "import os, sys; sys.stderr.write('x' * 5000 + 'Traceback: boom\\\\n'); sys.stderr.flush(); os.kill(os.getpid(), 9)"`,
    );
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'error', end_reason: 'agent_exit', verifier: null });
      const err = errorOf(c.history());
      const tail = String(err?.context.stderr_tail);
      expect(tail).toHaveLength(STDERR_TAIL_BYTES);
      // The shell that ran it adds its own word about the kill.
      expect(tail).toMatch(/x{100}Traceback: boom\n(Killed\n)?$/);
      expect(err?.message).toMatch(/killed by SIGKILL|exited with code 137/);
      // The whole of it (not only the tail) is in the step's output, up to the cap.
      expect(ofType(c.history(), 'agent_output')[0]?.stderr).toContain('x'.repeat(5000));
    } finally {
      await c.dispose();
      t.cleanup();
    }
  });

  it('a hanging agent is ended by the episode timeout and its process group is killed', async () => {
    const t = tempTask({ timeouts: { episode: 2, step_hard: 60 } });
    const c = await startTemp(t.path, 'echo $$ > agent.pid; sleep 600 & wait');
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'timeout', end_reason: 'episode_timeout' });
      const pid = Number(readFileSync(join(t.dir, 'agent.pid'), 'utf8'));
      expect(livingInGroup(pid)).toEqual([]);
    } finally {
      await c.dispose();
      t.cleanup();
    }
  });

  it('max_steps ends the episode (verifier run) and stops the agent', async () => {
    const dir = exampleDir('python-stdlib');
    const t = tempTask({ ...JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')), max_steps: 1 });
    const c = await startTemp(
      t.path,
      `echo $$ > agent.pid; exec python3 ${join(dir, 'agent.py')}`,
      `scripted:${join(dir, 'model.jsonl')}`,
    );
    try {
      await c.run();
      // Step 1 already wrote the three lines, so the verifier passes.
      expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'max_steps', steps: 1 });
      expect(livingInGroup(Number(readFileSync(join(t.dir, 'agent.pid'), 'utf8')))).toEqual([]);
    } finally {
      await c.dispose();
      t.cleanup();
    }
  });

  it('the agent process gets the contract environment and no host secrets', async () => {
    const t = tempTask({});
    const saved = { ...process.env };
    Object.assign(process.env, {
      DOCKER_HOST: 'unix:///var/run/docker.sock',
      STEPBOX_HOME: docker.env.home,
      OPENAI_API_KEY: 'sk-user-SECRET-1234',
      AWS_SECRET_ACCESS_KEY: 'aws-SECRET',
      SSH_AUTH_SOCK: '/tmp/agent.sock',
    });
    try {
      const c = await startTemp(t.path, 'env > docker.env.txt');
      try {
        await c.run();
        expect(c.ended()).toMatchObject({ end_reason: 'agent_exited' });
      } finally {
        await c.dispose();
      }
      const names = readFileSync(join(t.dir, 'docker.env.txt'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('=')[0])
        .filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n));
      const allowed = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TERM', 'USER'];
      const contract = [
        'OPENAI_BASE_URL',
        'OPENAI_API_KEY',
        'ANTHROPIC_BASE_URL',
        'ANTHROPIC_API_KEY',
        'STEPBOX_MCP_URL',
        'STEPBOX_TOKEN',
        'STEPBOX_MODEL',
        'STEPBOX_GOAL',
        'STEPBOX_TASK',
        'STEPBOX_EPISODE',
      ];
      expect(names.filter((n) => !allowed.includes(n) && !contract.includes(n))).toEqual([]);
      const text = readFileSync(join(t.dir, 'docker.env.txt'), 'utf8');
      expect(text).not.toMatch(/SECRET|docker\.sock|agent\.sock/);
      expect(text).toMatch(/^OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1$/m);
    } finally {
      process.env = saved;
      t.cleanup();
    }
  });
});
