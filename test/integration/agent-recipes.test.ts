import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { forkEpisode, loadTask, startEpisode } from '../../electron/engine/harness/index.js';
import { replayVerify } from '../../electron/engine/harness/replay-verify.js';
import { addAgentRecipe } from '../support/cli.js';
import { checkBranch } from '../../electron/engine/qa/check-branches.js';
import { loadedBranch } from '../../electron/engine/qa/episode-set.js';
import { describeDocker, useDockerHome } from '../support/docker.js';
import { call, final, ofType, script } from '../support/harness.js';

// Each shipped recipe, installed the way a person does (`stepbox agents add NAME`, npm's
// cache kept between runs), on a one-command task with a scripted model answering in the
// agent's own tool: the agent runs `echo hi > out.txt` itself, then answers. The run
// succeeds, a fork at 1 succeeds, and `replay --verify` re-runs the agent exactly.

const docker = useDockerHome();

const COMMAND = 'echo hi > out.txt';

/** The first scripted answer per recipe: one call of the agent's own shell tool. */
const FIRST: Record<string, object> = {
  codex: call('exec_command', { cmd: COMMAND }, 'call_1'),
  'claude-code': call('Bash', { command: COMMAND, description: 'write out.txt' }, 'toolu_1'),
  // In Gemini's own form (a candidate's content), as a Gemini script may be written.
  gemini: {
    role: 'model',
    parts: [{ functionCall: { id: 'call_1', name: 'run_shell_command', args: { command: COMMAND } } }],
  },
  'qwen-code': call('run_shell_command', { command: COMMAND, is_background: false }, 'call_1'),
  pi: call('bash', { command: COMMAND }, 'call_1'),
  opencode: call('bash', { command: COMMAND, description: 'write out.txt' }, 'call_1'),
  copilot: call('bash', { command: COMMAND, description: 'write out.txt' }, 'call_1'),
};

/** The API each agent speaks to the endpoint. */
const API: Record<string, string> = {
  codex: 'responses',
  'claude-code': 'anthropic.messages',
  gemini: 'gemini',
  'qwen-code': 'chat.completions',
  pi: 'chat.completions',
  opencode: 'chat.completions',
  copilot: 'chat.completions',
};

function taskDir(name: string): string {
  const dir = join(docker.env.dir, `task-${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'task.json'),
    JSON.stringify({
      name: `hi-${name}`,
      goal: 'Write hi into out.txt with one shell command, then say done.',
      tools: [],
      timeouts: { step_soft: 60, step_hard: 180, episode: 600 },
      max_steps: 10,
      // One command is the whole job: a clean run is not "too few actions".
      qa: { min_actions: 1 },
      verifier: { command: 'test "$(cat out.txt)" = hi', timeout: 30 },
    }),
  );
  return dir;
}

/** QA of a stored branch as the window, `check` and the shared file give it: a clean run has none. */
async function flagsOf(id: string): Promise<string[]> {
  const store = docker.env.store;
  const info = store.resolve(id);
  const { flags } = await checkBranch(loadedBranch(info, store.readTrace(info)), store);
  return flags.map((f) => `${f.rule}@${f.step}: ${f.message}`);
}

describeDocker('the shipped agent recipes, end to end with a scripted model', () => {
  for (const name of Object.keys(FIRST)) {
    it(`${name}: agents add, run to succeeded, fork --at 1 succeeded, replay --verify exact`, async () => {
      await addAgentRecipe(docker.env.home, name);
      const dir = taskDir(name);
      const t = loadTask(dir);
      if (!t.ok) throw new Error(t.error.message);
      const model = script(dir, 'model.jsonl', [FIRST[name], final('done')]);
      const c = await startEpisode({
        task: t.value,
        taskPath: join(dir, 'task.json'),
        agentSpec: name,
        agentOptions: { model: `scripted:${model}` },
        ...docker.episode,
      });
      let episode = '';
      try {
        await c.run();
        expect(c.ended(), JSON.stringify(ofType(c.history(), 'error'))).toMatchObject({
          status: 'succeeded',
          end_reason: 'final_answer',
          steps: 2,
        });
        const h = c.history();
        expect(ofType(h, 'tool_call').map((e) => e.step)).toEqual([1]);
        expect(ofType(h, 'tool_result')[0].result.ok).toBe(true);
        expect((ofType(h, 'model_request')[0] as { api?: string }).api).toBe(API[name]);
        const out = await c.sandbox()?.readFile('out.txt');
        expect(out?.ok && new TextDecoder().decode(out.value)).toBe('hi\n');
        episode = c.episode;
      } finally {
        await c.dispose();
      }
      const again = script(dir, 'fork.jsonl', [final('done again')]);
      const f = await forkEpisode({
        id: episode,
        at: 1,
        ...docker.episode,
        agentOptions: { model: `scripted:${again}` },
      });
      try {
        await f.run();
        expect(f.ended()).toMatchObject({ status: 'succeeded', steps: 2 });
        // Step 1 re-run by the agent printed the same (volatile parts aside).
        expect(ofType(f.history(), 'warning').filter((w) => w.code === 'drift')).toEqual([]);
      } finally {
        await f.dispose();
      }
      // QA tells the truth about agents that run their own tools: no flag on the run or its fork.
      expect(await flagsOf(episode)).toEqual([]);
      expect(await flagsOf(f.branch)).toEqual([]);
      const report = await replayVerify({ id: episode, ...docker.episode });
      expect(report).toMatchObject({ replayed: 'program', verdict: 'identical', diverged_at: null });
      expect(report.steps).toHaveLength(2);
    }, 900_000);
  }
});
