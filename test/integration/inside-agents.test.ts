import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { TraceEvent } from '../../shared/trace-events.js';
import { forkEpisode, loadTask, startEpisode } from '../../electron/engine/harness/index.js';
import { compareBranches } from '../../electron/engine/compare/compare-branches.js';
import type { EpisodeRunner } from '../../electron/engine/harness/episode-runner.js';
import { replayVerify } from '../../electron/engine/harness/replay-verify.js';
import { addAgentRecipe } from '../support/cli.js';
import { describeDocker, exampleDir, useDockerHome } from '../support/docker.js';
import { call, final, ofType, script } from '../support/harness.js';

const docker = useDockerHome();

const PY = 'sandbox:python3 /opt/agent/agent.py';
const PY_DIR = exampleDir('python-inside');

/** Starts an agent inside the sandbox on a task folder of resources/agents, with `model` answering. */
async function startInside(
  taskDir: string,
  agentSpec: string,
  model: string,
  agentDir?: string,
): Promise<EpisodeRunner> {
  const t = loadTask(taskDir);
  if (!t.ok) throw new Error(t.error.message);
  return startEpisode({
    task: t.value,
    taskPath: join(taskDir, 'task.json'),
    agentSpec,
    agentOptions: { model, ...(agentDir ? { agentDir } : {}) },
    ...docker.episode,
  });
}

function requestAt(events: readonly TraceEvent[], step: number) {
  const e = ofType(events, 'model_request').find((r) => r.step === step);
  if (!e) throw new Error(`no model_request at step ${step}`);
  return e as typeof e & {
    request: { messages: { role: string; content: unknown; tool_call_id?: string }[] };
  };
}

/** The tool messages of a recorded request (what the model was shown of the outputs). */
function toolMessages(events: readonly TraceEvent[], step: number): string[] {
  return requestAt(events, step)
    .request.messages.filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
}

async function readWorkspace(c: EpisodeRunner, path: string): Promise<string> {
  const r = await c.sandbox()?.readFile(path);
  if (!r?.ok) throw new Error(`cannot read ${path}`);
  return new TextDecoder().decode(r.value);
}

describeDocker('agents inside the sandbox (sandbox:, recipes) on Docker', () => {
  it('python-inside: runs its own tools inside the sandbox to succeeded; steps, results and snapshots are recorded', async () => {
    const c = await startInside(PY_DIR, PY, `scripted:${join(PY_DIR, 'model.jsonl')}`, PY_DIR);
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 3 });
      const h = c.history();
      expect(ofType(h, 'tool_call').map((e) => [e.step, e.name])).toEqual([
        [1, 'write_file'],
        [2, 'shell'],
      ]);
      // The results are what the agent sent in its next request.
      expect(ofType(h, 'tool_result').map((e) => e.result.stdout)).toEqual([
        'wrote 40 bytes to notes/todo.txt',
        'exit code 0\n3 notes/todo.txt\n',
      ]);
      expect(ofType(h, 'snapshot').map((e) => e.step)).toEqual([0, 1, 2, 3]);
      expect(ofType(h, 'snapshot')[1].changed.map((x) => x.path)).toContain('notes/todo.txt');
      expect(c.currentAgent().kind).toBe('sandbox');
    } finally {
      await c.dispose();
    }
  }, 120_000);

  it('a pause before the answer and an edited call change what the agent runs; an override changes what the model is shown, in every later request', async () => {
    const model = script(docker.env.dir, 'py-edit.jsonl', [
      call('shell', { command: 'echo original > a.txt' }, 'call_1'),
      call('shell', { command: 'cat a.txt' }, 'call_2'),
      call('shell', { command: 'ls' }, 'call_3'),
      final('done'),
    ]);
    const c = await startInside(PY_DIR, PY, `scripted:${model}`, PY_DIR);
    try {
      c.setStopPoints({ before_answer: true });
      const stop = await c.step();
      expect(stop.kind).toBe('before_answer');
      expect(c.held()?.calls.map((x) => x.name)).toEqual(['shell']);
      // Checked against the tool schema the agent sent: shell takes {command} only.
      expect(() => c.editArguments('call_1', { cmd: 'x' })).toThrow(/shell/);
      c.editArguments('call_1', { command: 'echo edited > a.txt' });
      c.setStopPoints({ before_answer: false });
      await c.step();
      expect(await readWorkspace(c, 'a.txt')).toBe('edited\n');
      await c.step();
      expect(ofType(c.history(), 'tool_result').at(-1)?.result.stdout).toBe('exit code 0\nedited\n');
      c.overrideLastResult({ ok: true, stdout: 'exit code 0\nOVERRIDDEN\n', duration_ms: 0, bytes: 0 });
      await c.step();
      await c.run();
      // The task's verifier wants notes/todo.txt, which this script never writes.
      expect(c.ended()).toMatchObject({ end_reason: 'final_answer', steps: 4 });
      const h = c.history();
      // The agent sent the real output; the model was shown the override, then and later.
      expect(toolMessages(h, 3)).toContain('exit code 0\nOVERRIDDEN\n');
      expect(toolMessages(h, 4)).toContain('exit code 0\nOVERRIDDEN\n');
      expect(JSON.stringify(requestAt(h, 4).received ?? '')).not.toContain('OVERRIDDEN');
    } finally {
      await c.dispose();
    }
  }, 120_000);

  it('rollback to 1 re-runs the agent from snapshot 0 and continues; a fork at 2 with another model makes another workspace', async () => {
    const c = await startInside(PY_DIR, PY, `scripted:${join(PY_DIR, 'model.jsonl')}`, PY_DIR);
    let episode = '';
    try {
      await c.step();
      await c.step();
      await c.rollbackTo(1);
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded', steps: 3 });
      episode = c.episode;
      // Re-run with the same tools: no drift.
      expect(ofType(c.history(), 'warning').filter((w) => w.code === 'drift')).toEqual([]);
    } finally {
      await c.dispose();
    }
    const f = await forkEpisode({
      id: episode,
      at: 2,
      ...docker.episode,
      agentOptions: { model: `scripted:${join(PY_DIR, 'model-fork.jsonl')}` },
    });
    try {
      await f.run();
      expect(f.ended()).toMatchObject({ status: 'succeeded', steps: 4 });
      expect(await readWorkspace(f, 'notes/done.txt')).toBe('forked\n');
      expect(await readWorkspace(f, 'notes/todo.txt')).toContain('call grandma');
      const own = docker.env.store.readTrace(docker.env.store.resolve(f.branch)).events;
      expect(ofType(own, 'tool_call').map((e) => e.step)).toEqual([3]);
    } finally {
      await f.dispose();
    }
    // diff (`stepbox diff`, the window's compare) aligns the two: steps 1–2 taken over, 3 on differ.
    const cmp = await compareBranches(docker.env.store, episode, f.branch);
    expect(cmp.pairs.slice(0, 2).map((p) => [p.a_step, p.b_step, p.verdict])).toEqual([
      [1, 1, 'same'],
      [2, 2, 'same'],
    ]);
    expect(cmp.diverged_at).toBe(3);
    expect(cmp.files_differ).toContain('notes/done.txt');
  }, 180_000);

  it('replay --verify of a run whose tool prints the time reports its output differing at that step (tool_result_differs), not an unanswerable request; a fork whose request the recording cannot answer diverges', async () => {
    const model = script(docker.env.dir, 'py-clock.jsonl', [
      call(
        'shell',
        { command: "mkdir -p notes; printf 'a\\nb\\nc\\n' > notes/todo.txt; date +%s%N" },
        'call_1',
      ),
      call('shell', { command: 'wc -l notes/todo.txt' }, 'call_2'),
      final('done'),
    ]);
    const c = await startInside(PY_DIR, PY, `scripted:${model}`, PY_DIR);
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded' });
    } finally {
      await c.dispose();
    }
    // replay --verify re-runs the agent itself: step 1's output differs, nothing is unanswerable.
    const report = await replayVerify({ id: c.episode, ...docker.episode });
    expect(report).toMatchObject({ replayed: 'program', verdict: 'diverged', diverged_at: 1 });
    expect(report.steps.map((s) => s.verdict)).toEqual(['diverged', 'match', 'no_calls']);
    expect(report.diff).toEqual([
      expect.objectContaining({
        kind: 'tool_result_differs',
        call_id: 'call_1',
        name: 'shell',
        field: 'output',
      }),
    ]);
    // The same run forked with an agent that sends no tool outputs: request 2 cannot be answered.
    const f = await forkEpisode({ id: c.episode, at: 2, agentSpec: `${PY} --lossy`, ...docker.episode });
    try {
      await f.run();
      expect(f.ended()).toMatchObject({ status: 'error', end_reason: 'diverged' });
      const error = ofType(f.history(), 'error').at(-1) as { context?: Record<string, unknown> } | undefined;
      expect(error?.context).toMatchObject({ diverged_at: 2, field: 'tool outputs' });
    } finally {
      await f.dispose();
    }
  }, 180_000);

  it('on network "host" the agent starts (the endpoint\'s port is taken there: the bridge takes a free one) and runs to succeeded', async () => {
    const dir = join(docker.env.dir, 'host-net');
    mkdirSync(dir, { recursive: true });
    const task = JSON.parse(readFileSync(join(PY_DIR, 'task.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'task.json'), JSON.stringify({ ...task, sandbox: { network: 'host' } }));
    const c = await startInside(dir, PY, `scripted:${join(PY_DIR, 'model.jsonl')}`, PY_DIR);
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 3 });
      // The sandbox shares the host's network: the endpoint's own port was taken, another served.
      const agent = c.currentAgent() as unknown as {
        endpoints(): { port: number | null; modelUrl: string } | null;
      };
      const e = agent.endpoints();
      expect(e?.port).toBeGreaterThan(0);
      expect(e?.port).not.toBe(Number(new URL(e?.modelUrl ?? 'http://x').port));
    } finally {
      await c.dispose();
    }
  }, 120_000);

  it('a streamed answer cut mid-way and asked again gets the same answer, recorded once, with a warning that it was re-sent', async () => {
    // Every request is sent twice, as an SDK does on a dropped connection: first cut after a
    // few bytes of the streamed answer, then again with the identical body, read whole.
    const agent = [
      'import json, os, socket, subprocess, urllib.parse, urllib.request',
      'base = os.environ["OPENAI_BASE_URL"]; key = os.environ["OPENAI_API_KEY"]; u = urllib.parse.urlparse(base)',
      'TOOLS = [{"type": "function", "function": {"name": "shell", "description": "run", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]',
      'def cut(data):',
      '    s = socket.create_connection((u.hostname, u.port))',
      '    s.sendall(b"POST " + u.path.encode() + b"/chat/completions HTTP/1.1\\r\\nHost: " + u.netloc.encode() + b"\\r\\nAuthorization: Bearer " + key.encode() + b"\\r\\nContent-Type: application/json\\r\\nContent-Length: " + str(len(data)).encode() + b"\\r\\n\\r\\n" + data)',
      '    s.recv(40); s.close()',
      'def whole(data):',
      '    r = urllib.request.Request(base + "/chat/completions", data=data, headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})',
      '    content, calls = "", {}',
      '    for line in urllib.request.urlopen(r).read().decode().splitlines():',
      '        if not line.startswith("data: {"): continue',
      '        d = json.loads(line[6:])["choices"]',
      '        if not d: continue',
      '        d = d[0]["delta"]; content += d.get("content") or ""',
      '        for c in d.get("tool_calls") or []: calls[c["index"]] = c',
      '    return content, [calls[i] for i in sorted(calls)]',
      'messages = [{"role": "user", "content": os.environ["STEPBOX_GOAL"]}]',
      'while True:',
      '    data = json.dumps({"model": os.environ["STEPBOX_MODEL"], "messages": messages, "tools": TOOLS, "stream": True}).encode()',
      '    cut(data)',
      '    content, calls = whole(data)',
      '    messages.append(dict({"role": "assistant", "content": content}, **({"tool_calls": [{"id": c["id"], "type": "function", "function": c["function"]} for c in calls]} if calls else {})))',
      '    if not calls: break',
      '    for c in calls:',
      '        out = subprocess.run(["sh", "-c", json.loads(c["function"]["arguments"])["command"]], capture_output=True, text=True).stdout',
      '        messages.append({"role": "tool", "tool_call_id": c["id"], "content": out})',
    ].join('\n');
    const dir = join(docker.env.dir, 'retry-agent');
    mkdirSync(dir, { recursive: true });
    script(dir, 'retry.py', [agent]);
    const model = script(dir, 'model.jsonl', [
      call('shell', { command: 'echo hi > a.txt; cat a.txt' }, 'call_1'),
      final('done'),
    ]);
    const c = await startInside(PY_DIR, 'sandbox:python3 /opt/agent/retry.py', `scripted:${model}`, dir);
    try {
      await c.run();
      expect(c.ended()).toMatchObject({ end_reason: 'final_answer', steps: 2 });
      const h = c.history();
      // Each answer recorded once; the agent got step 1's call and ran it (no "cancelled").
      expect(ofType(h, 'model_request').map((e) => e.step)).toEqual([1, 2]);
      expect(ofType(h, 'model_output').map((e) => e.step)).toEqual([1, 2]);
      expect(ofType(h, 'tool_result').map((e) => [e.step, e.result.ok, e.result.stdout])).toEqual([
        [1, true, 'hi\n'],
      ]);
      const resent = ofType(h, 'warning').filter((w) => w.code === 'answer_resent');
      expect(resent.map((w) => w.step)).toEqual([1, 2]);
      expect(resent[0].message).toMatch(/identical request.*re-sent/);
    } finally {
      await c.dispose();
    }
  }, 120_000);

  it('the agent inside reaches nothing but the endpoint, and the endpoint refuses it without the token', async () => {
    const probe = [
      'import json, os, socket, urllib.request, urllib.error',
      'out = {}',
      'for name, addr in [("public", ("1.1.1.1", 80)), ("gateway", ("172.17.0.1", 2375)), ("dns", ("8.8.8.8", 53))]:',
      '    s = socket.socket(); s.settimeout(2)',
      '    try:',
      '        s.connect(addr); out[name] = "connected"',
      '    except OSError as e:',
      '        out[name] = "refused: %s" % e.__class__.__name__',
      'base = os.environ["OPENAI_BASE_URL"]',
      'try:',
      '    urllib.request.urlopen(base + "/models"); out["no_token"] = 200',
      'except urllib.error.HTTPError as e:',
      '    out["no_token"] = e.code',
      'r = urllib.request.Request(base + "/models", headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})',
      'out["token"] = urllib.request.urlopen(r).status',
      'out["docker_sock"] = os.path.exists("/var/run/docker.sock")',
      'out["env"] = sorted(k for k in os.environ if "KEY" in k or "TOKEN" in k)',
      // The bridge (root, its own exec) carries the channel to the host: out of the agent's reach.
      'bridge = [p for p in os.listdir("/proc") if p.isdigit() and b"agent bridge" in open("/proc/%s/cmdline" % p, "rb").read()]',
      'out["bridge_found"] = len(bridge)',
      'for pid in bridge:',
      '    for what, fn in [("kill", lambda: os.kill(int(pid), 9)), ("fds", lambda: os.listdir("/proc/%s/fd" % pid)), ("mem", lambda: open("/proc/%s/mem" % pid, "rb").read(1)), ("environ", lambda: open("/proc/%s/environ" % pid, "rb").read())]:',
      '        try:',
      '            fn(); out["bridge_" + what] = "reached"',
      '        except OSError as e:',
      '            out["bridge_" + what] = e.__class__.__name__',
      // The bridge drops privileges as the helper does (prelude.py): no capability even in
      // the bounding set, no supplementary groups.
      'status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)',
      'out["cap_bnd"] = status["CapBnd"].strip(); out["cap_prm"] = status["CapPrm"].strip(); out["groups"] = status["Groups"].strip()',
      'out["ids"] = [os.getresuid(), os.getresgid()]',
      'print(json.dumps(out))',
    ].join('\n');
    const dir = join(docker.env.dir, 'probe-agent');
    mkdirSync(dir, { recursive: true });
    const path = script(dir, 'probe.py', [probe]);
    const c = await startInside(PY_DIR, `sandbox:python3 /opt/agent/probe.py`, 'manual', dir);
    try {
      await c.run();
      const out = ofType(c.history(), 'agent_output')
        .map((o) => o.stdout)
        .join('');
      const report = JSON.parse(out.trim()) as Record<string, unknown>;
      expect(report.public).toMatch(/^refused/);
      expect(report.gateway).toMatch(/^refused/);
      expect(report.dns).toMatch(/^refused/);
      expect(report.no_token).toBe(401);
      expect(report.token).toBe(200);
      expect(report.docker_sock).toBe(false);
      expect(report.bridge_found).toBe(1);
      for (const what of ['kill', 'fds', 'mem', 'environ'])
        expect(report[`bridge_${what}`], what).toBe('PermissionError');
      expect(report.env).toEqual(['ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'OPENAI_API_KEY', 'STEPBOX_TOKEN']);
      expect(report.cap_bnd).toBe('0000000000000000');
      expect(report.cap_prm).toBe('0000000000000000');
      expect(report.groups).toBe('');
      expect(report.ids).toEqual([
        [1000, 1000, 1000],
        [1000, 1000, 1000],
      ]);
      expect(path).toContain('probe.py');
    } finally {
      await c.dispose();
    }
  }, 120_000);

  it('Codex CLI (installed by stepbox agents add) runs to succeeded; an edited cmd changes what it runs; a fork at 2 continues', async () => {
    await addAgentRecipe(docker.env.home, 'codex');
    const dir = exampleDir('codex');
    const c = await startInside(dir, 'codex', `scripted:${join(dir, 'model.jsonl')}`);
    try {
      c.setStopPoints({ before_answer: true });
      await c.step();
      const held = c.held();
      expect(held?.calls[0]).toMatchObject({ name: 'exec_command' });
      c.editArguments(held?.calls[0].id as string, {
        cmd: "mkdir -p notes && printf 'one\\ntwo\\nthree\\n' > notes/todo.txt",
      });
      c.setStopPoints({ before_answer: false });
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 3 });
      expect(ofType(c.history(), 'tool_result')[0].result.stdout).toMatch(/Process exited with code 0/);
    } finally {
      await c.dispose();
    }
    const alt = script(docker.env.dir, 'codex-alt.jsonl', [
      call('exec_command', { cmd: 'echo forked > notes/forked.txt' }, 'call_9'),
      final('forked'),
    ]);
    const f = await forkEpisode({
      id: c.episode,
      at: 2,
      ...docker.episode,
      agentOptions: { model: `scripted:${alt}` },
    });
    try {
      await f.run();
      expect(f.ended()).toMatchObject({ status: 'succeeded', steps: 4 });
      expect(await readWorkspace(f, 'notes/forked.txt')).toBe('forked\n');
      expect(await readWorkspace(f, 'notes/todo.txt')).toBe('one\ntwo\nthree\n');
      // Codex's own volatile lines (Chunk ID, Wall time) are not drift.
      expect(ofType(f.history(), 'warning').filter((w) => w.code === 'drift')).toEqual([]);
    } finally {
      await f.dispose();
    }
  }, 600_000);

  it('Claude Code (installed by stepbox agents add) runs to succeeded as the sandbox user; a rollback to 1 re-runs it', async () => {
    await addAgentRecipe(docker.env.home, 'claude-code');
    const dir = exampleDir('claude-code');
    const c = await startInside(dir, 'claude-code', `scripted:${join(dir, 'model.jsonl')}`);
    try {
      await c.step();
      await c.step();
      await c.rollbackTo(1);
      await c.run();
      expect(c.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer', steps: 3 });
      expect(ofType(c.history(), 'tool_call').map((e) => e.name)).toEqual(['Bash', 'Bash']);
      expect(ofType(c.history(), 'tool_result').at(-1)?.result.stdout).toContain('3 notes/todo.txt');
      const api = ofType(c.history(), 'model_request')[0] as { api?: string };
      expect(api.api).toBe('anthropic.messages');
    } finally {
      await c.dispose();
    }
  }, 600_000);
});
