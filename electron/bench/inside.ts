import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../../shared/median.js';
import { Task } from '../../shared/task.js';
import { installed } from '../engine/agents/recipes.js';
import { parseScript, ScriptedAgent } from '../engine/agents/scripted-agent.js';
import { ModelEndpoint } from '../engine/external/model-endpoint.js';
import { forkEpisode, startEpisode } from '../engine/harness/index.js';
import { agentSandboxConfig } from '../engine/harness/agent-sandbox.js';
import { openEngine } from '../engine/open-engine.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { BenchSection } from './bench-section.js';
import { dockerPrerequisite } from './docker-prerequisite.js';

/** Model calls timed through the bridge (the issue asks for a median over at least 200). */
const CALLS = 300;
const TOKEN = 'bench-token';
/** Workspace files of the snapshot measurement (the harness bench's size). */
const FILES = 50;
const PYTHON_INSIDE = resolve(
  fileURLToPath(new URL('../../../resources/agents/python-inside', import.meta.url)),
);

/** The wire APIs timed, each with a one-message request in its own form. */
const APIS = ['chat', 'responses', 'messages', 'gemini'] as const;

/** A client inside the sandbox: CALLS calls of each API on one kept-alive connection, each timed there. */
const CLIENT = `
import http.client, json, os, statistics, time
port = int(os.environ["P"])
apis = {
    "chat": ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "bench"}]}),
    "responses": ("/v1/responses", {"model": "m", "input": "bench"}),
    "messages": ("/v1/messages", {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "bench"}]}),
    "gemini": ("/v1beta/models/m:generateContent", {"contents": [{"role": "user", "parts": [{"text": "bench"}]}]}),
}
c = http.client.HTTPConnection("127.0.0.1", port)
out = {}
for name, (path, body) in apis.items():
    body = json.dumps(body)
    times = []
    for _ in range(${CALLS}):
        t = time.perf_counter()
        c.request("POST", path, body, {"Content-Type": "application/json", "Authorization": "Bearer ${TOKEN}", "Host": "127.0.0.1:%d" % port})
        r = c.getresponse(); r.read()
        if r.status != 200: raise SystemExit("%s answered %d" % (path, r.status))
        times.append((time.perf_counter() - t) * 1000)
    out[name] = statistics.median(times)
print(json.dumps(out))
`;

function script(steps: number, call: (i: number) => Record<string, unknown>, last: string): string {
  const lines: string[] = [];
  for (let i = 1; i < steps; i++)
    lines.push(
      JSON.stringify({
        content: null,
        tool_calls: [
          {
            id: `call_${i}`,
            type: 'function',
            function: { name: call(i).name, arguments: JSON.stringify(call(i).arguments) },
          },
        ],
      }),
    );
  lines.push(JSON.stringify({ content: last }));
  return lines.join('\n') + '\n';
}

/**
 * Section `inside`: agents inside the sandbox. inside_model_call_ms_{chat,responses,
 * messages,gemini}: a model call of each wire API sent inside the sandbox to
 * 127.0.0.1:PORT, through the bridge to the endpoint (a scripted source answering) and
 * back, timed inside (median of 300 each; bar 2 ms each); inside_model_call_ms is the
 * slowest of the four.
 * inside_snapshot_ms: snapshot per model call of a python-inside episode on a 50-file
 * workspace (bar 20 ms). inside_fork_ratio: a fork at step 3 of a 5-call Codex CLI
 * episode (scripted) against the original's wall time, same run (bar 2×; needs
 * `stepbox agents add codex`).
 */
export const section: BenchSection = {
  name: 'inside',

  prerequisite: dockerPrerequisite,

  async run(log) {
    const dir = await mkdtemp(join(tmpdir(), 'stepbox-bench-inside-'));
    const home = join(dir, 'home');
    const engine = openEngine({ home, pool: 1 });
    const out: Record<string, number | string | boolean | null> = {};
    try {
      // 1. The bridge: a scripted endpoint answering a client inside the sandbox.
      log(
        `inside: ${CALLS} model calls per API (${APIS.join(', ')}) from inside the sandbox through the bridge`,
      );
      const endpoint = new ModelEndpoint(TOKEN, 'm');
      const url = await endpoint.start();
      const port = Number(new URL(url).port);
      const reply = JSON.stringify({ content: 'ok' });
      const source = new ScriptedAgent(
        'scripted:bench',
        'bench',
        parseScript(`${reply}\n`.repeat(CALLS * APIS.length + 5), 'bench'),
      );
      let answering = true;
      void (async () => {
        while (answering) {
          const call = await endpoint.next().catch(() => null);
          if (!call) return;
          const d = await source.decide({ step: 1, messages: [], tools: [] });
          call.answer(d.message as Parameters<typeof call.answer>[0]);
        }
      })();
      const supply = await engine.supply();
      const config = sandboxConfig(Task.parse({ name: 'b', goal: 'b' }).sandbox);
      const sandbox = await supply.acquire(config);
      let stdout = '';
      try {
        if (!sandbox.startAgent) throw new Error('the sandbox cannot run an agent inside');
        const run = await sandbox.startAgent({
          command: `python3 -c '${CLIENT.replaceAll("'", "'\\''")}'`,
          env: { P: '@PORT@', HOME: '/home/agent', PATH: '/usr/bin:/bin' },
          homeFiles: {},
          clearHome: true,
          agentFilesHash: null,
          port,
          connect: () => connect(port, '127.0.0.1').setNoDelay(true),
          onOutput: (s, c) => {
            if (s === 'stdout') stdout += c.toString('utf8');
          },
        });
        const exit = await run.exited;
        await run.stop();
        if (exit.code !== 0) throw new Error(`the bench client inside exited ${exit.code}`);
      } finally {
        answering = false;
        await endpoint.close();
        await supply.release(sandbox);
      }
      const medians = JSON.parse(stdout.trim()) as Record<(typeof APIS)[number], number>;
      for (const api of APIS) out[`inside_model_call_ms_${api}`] = medians[api];
      const callMs = Math.max(...APIS.map((api) => medians[api]));
      out.inside_model_call_ms = callMs;
      out.inside_model_call_target_met = callMs <= 2;
      out.inside_calls = CALLS;

      // 2. Snapshot per model call: python-inside on a 50-file workspace.
      log('inside: snapshot per model call (python-inside, 50-file workspace)');
      const files: Record<string, string> = {};
      for (let i = 0; i < FILES; i++) files[`src/module_${i}.py`] = `# module ${i}\n${'x = 1\n'.repeat(340)}`;
      const task = Task.parse({
        name: 'bench-inside',
        goal: 'edit notes',
        workspace: { files },
        max_steps: 30,
        timeouts: { step_soft: 20, step_hard: 60, episode: 600 },
        verifier: { command: 'true' },
      });
      const pyScript = join(dir, 'py.jsonl');
      await writeFile(
        pyScript,
        script(
          21,
          (i) => ({ name: 'write_file', arguments: { path: `notes/n${i % 5}.txt`, content: `note ${i}\n` } }),
          'done',
        ),
      );
      const env = await engine.episodeEnv();
      const py = await startEpisode({
        task,
        agentSpec: 'sandbox:python3 /opt/agent/agent.py',
        ...env,
        agentOptions: { model: `scripted:${pyScript}`, agentDir: PYTHON_INSIDE },
      });
      const snaps: number[] = [];
      py.onEvent((e) => {
        if (e.type === 'snapshot' && e.step > 0 && typeof e.duration_ms === 'number')
          snaps.push(e.duration_ms);
      });
      await py.run();
      await py.dispose();
      out.inside_snapshot_ms = median(snaps);
      out.inside_snapshot_target_met = median(snaps) <= 20;

      // 3. Fork at 3 of a 5-call Codex CLI episode, against the original's wall time.
      const codex = installed('codex', stepboxHome());
      if (codex.length === 0) {
        out.inside_fork_ratio = null;
        out.inside_fork_ratio_missing = 'Codex CLI is not installed: stepbox agents add codex';
        return out;
      }
      log('inside: a 5-call Codex CLI episode, then a fork at step 3');
      const cxTask = Task.parse({
        name: 'bench-codex',
        goal: 'write notes',
        timeouts: { step_soft: 30, step_hard: 120, episode: 600 },
        verifier: { command: 'true' },
      });
      const cxScript = join(dir, 'codex.jsonl');
      await writeFile(
        cxScript,
        script(5, (i) => ({ name: 'exec_command', arguments: { cmd: `echo ${i} > n${i}.txt` } }), 'done'),
      );
      const cxOptions = { model: `scripted:${cxScript}`, home: stepboxHome() };
      // The volume with Codex's files is filled before timing (once per engine, like an install).
      await engine.prewarm(agentSandboxConfig(cxTask, engine.parts.agent('codex', cxOptions)));
      let t0 = performance.now();
      const cx = await startEpisode({ task: cxTask, agentSpec: 'codex', ...env, agentOptions: cxOptions });
      await cx.run();
      await cx.dispose();
      const originalMs = performance.now() - t0;
      if (cx.ended()?.status !== 'succeeded')
        throw new Error(`the Codex episode ended ${cx.ended()?.status}`);
      t0 = performance.now();
      const fork = await forkEpisode({
        id: cx.episode,
        at: 3,
        ...env,
        agentOptions: { home: stepboxHome() },
      });
      await fork.run();
      await fork.dispose();
      const forkMs = performance.now() - t0;
      out.inside_codex_run_ms = originalMs;
      out.inside_codex_fork_ms = forkMs;
      out.inside_fork_ratio = forkMs / originalMs;
      out.inside_fork_target_met = forkMs <= 2 * originalMs;
      return out;
    } finally {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
