import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempHome } from '../support/harness.js';

// Harbor task folders (test/fixtures/harbor) run on the real engine through the CLI: the
// oracle solves them (reward 1), a scripted agent that looks for the tests and tries to
// forge the reward fails (reward 0) and is forked right, reward.json and a reward file that
// holds no number, and a dataset batch exported as ATIF.

const FIX = 'test/fixtures/harbor';
const HELLO = `${FIX}/dataset/hello-file`;
const AGENTS = `${FIX}/agents`;

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

const cli = (args: string[]) => runCli(args, { env: { STEPBOX_HOME: env.home }, timeoutMs: 120_000 });

/** The events of a branch's trace file. */
function events(trace: string): Record<string, unknown>[] {
  const raw = trace.endsWith('.gz')
    ? gunzipSync(readFileSync(trace)).toString('utf8')
    : readFileSync(trace, 'utf8');
  return raw
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('Harbor task folders on Docker', () => {
  it('the oracle solves a task (reward 1, succeeded); unknown task.toml keys are listed', async () => {
    const run = await cli(['run', HELLO, '--agent', 'oracle', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const s = JSON.parse(run.stdout);
    expect(s).toMatchObject({
      status: 'succeeded',
      steps: 1,
      verifier: { success: true, reward: 1 },
      final_reward: 1,
    });
    expect(run.stderr).toContain('unknown key [environment] shiny_new_key');
    expect(run.stderr).toContain('[environment] gpus is not honoured');
    const evs = events(s.trace);
    const header = evs[0] as {
      task: { verifier: { files: Record<string, string> } };
      agent: { kind: string };
    };
    expect(header.agent.kind).toBe('oracle');
    // The task is recorded like any: its verifier files travel with it (fork, replay, bundle).
    expect(Object.keys(header.task.verifier.files).sort()).toEqual(['test.sh', 'test_outputs.py']);
    const calls = evs.filter((e) => e.type === 'tool_call').map((e) => e.name);
    expect(calls).toEqual(['write_file', 'execute_shell']);
    const end = evs.find((e) => e.type === 'end') as { verifier: Record<string, unknown> };
    expect(end.verifier).toMatchObject({ reward: 1, reward_file: '/logs/verifier/reward.txt' });
    const reward = evs.find((e) => e.type === 'reward' && e.final) as { components: Record<string, number> };
    expect(reward.components.verifier).toBe(1);
  });

  it('an agent cannot see the tests nor forge the reward; its wrong answer gets reward 0; a fork at step 1 fixes it', async () => {
    const run = await cli(['run', HELLO, '--agent', `scripted:${AGENTS}/peek-and-wrong.jsonl`, '--json']);
    expect(run.code).toBe(1);
    const s = JSON.parse(run.stdout);
    expect(s).toMatchObject({ status: 'failed', verifier: { success: false, reward: 0 }, final_reward: 0 });
    const result = events(s.trace).find((e) => e.type === 'tool_result') as {
      result: { stdout: string; stderr: string };
    };
    // /tests is empty and not writable while the agent works; nothing of the tests is anywhere.
    expect(result.result.stderr).toContain('/tests/test.sh: No such file or directory');
    expect(result.result.stdout).not.toContain('HARBOR-TESTS-MARKER');
    expect(result.result.stdout).not.toMatch(/test_outputs\.py|test\.sh/);
    expect(result.result.stdout).toContain('forge-exit=1');
    expect(result.result.stderr).toContain('/logs/verifier/reward.txt: Permission denied');

    const fork = await cli([
      'fork',
      s.episode,
      '--at',
      '1',
      '--agent',
      `scripted:${AGENTS}/hello-right.jsonl`,
      '--json',
    ]);
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout)).toMatchObject({
      status: 'succeeded',
      fork_step: 1,
      steps: 3,
      verifier: { success: true, reward: 1 },
    });
  });

  it('reads reward.json (its numeric fields kept) before reward.txt', async () => {
    const run = await cli(['run', `${FIX}/dataset/sum-json`, '--agent', 'oracle', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const s = JSON.parse(run.stdout);
    const end = events(s.trace).find((e) => e.type === 'end') as { verifier: Record<string, unknown> };
    expect(end.verifier).toMatchObject({
      success: true,
      reward: 1,
      reward_file: '/logs/verifier/reward.json',
      rewards: { reward: 1, checks_run: 1 },
    });
  });

  it('a reward file that holds no number fails the episode naming the file and what it held', async () => {
    const run = await cli([
      'run',
      `${FIX}/not-a-number`,
      '--agent',
      `scripted:${AGENTS}/done.jsonl`,
      '--json',
    ]);
    expect(run.code).toBe(1);
    const s = JSON.parse(run.stdout);
    expect(s.status).toBe('failed');
    expect(s.verifier.error).toMatchObject({ code: 'reward_invalid' });
    expect(s.verifier.error.message).toContain('/logs/verifier/reward.txt holds "passed", not a number');
    expect(run.stderr).toContain('reward.txt holds "passed"');
    // Nothing lost: the trace is whole, closed with its end.
    expect(events(s.trace).at(-1)).toMatchObject({ type: 'end', status: 'failed' });
  });

  it('a reward file left as a link, a fifo or a flood is never followed, never blocks the verifier and never passes', async () => {
    // test.sh is the task author's: what it leaves in /logs/verifier is read by the root runner.
    const cases: [string, string, RegExp][] = [
      // A link to a file holding 1 (it could as well be /workspace/anything the agent wrote).
      [
        'link',
        'echo 1 > /tmp/one; ln -s /tmp/one /logs/verifier/reward.txt',
        /reward\.txt holds "\(a symbolic link, not followed\)", not a number/,
      ],
      ['fifo', 'mkfifo /logs/verifier/reward.json', /reward\.json holds "\(not a regular file\)", not JSON/],
      // 1 then 5 MB of blanks: read 64 KiB of it, quoted 80 characters, not taken for 1.
      [
        'flood',
        'printf 1 > /logs/verifier/reward.txt; head -c 5000000 /dev/zero | tr "\\0" " " >> /logs/verifier/reward.txt',
        /reward\.txt holds "1 {79}…", not a number/,
      ],
    ];
    for (const [name, script, why] of cases) {
      const dir = join(env.home, `reward-${name}`);
      cpSync(`${FIX}/not-a-number`, dir, { recursive: true });
      writeFileSync(join(dir, 'tests/test.sh'), `#!/bin/bash\n${script}\n`);
      const run = await cli(['run', dir, '--agent', `scripted:${AGENTS}/done.jsonl`, '--json']);
      expect(run.code, `${name}: ${run.stderr}`).toBe(1);
      const s = JSON.parse(run.stdout);
      expect(s.verifier, name).toMatchObject({ success: false, error: { code: 'reward_invalid' } });
      expect(s.verifier.error.message, name).toMatch(why);
      expect(events(s.trace).at(-1), name).toMatchObject({ type: 'end', status: 'failed' });
    }
  });

  it("an image's LD_PRELOAD never loads the agent's library into a root program of the sandbox (the verifier's runner)", async () => {
    // The image preloads /workspace/root-marker.so; the agent writes it (test/fixtures/harbor/preload/root-marker.c),
    // then the verifier's runner starts as root. Loaded there, the agent's code ran as root beside the report.
    const run = await cli([
      'run',
      `${FIX}/preload`,
      '--agent',
      `scripted:${AGENTS}/preload-root.jsonl`,
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const s = JSON.parse(run.stdout);
    const end = events(s.trace).find((e) => e.type === 'end') as { verifier: { stdout: string } };
    expect(end.verifier.stdout).toContain('root-marker: absent');
  });

  it('a Dockerfile environment (FROM stepbox-sandbox:2, WORKDIR /app) is built and worked in at /app: oracle right, a wrong answer 0, forked right at step 1', async () => {
    const APP = `${FIX}/dockerfile-app`;
    const oracle = await cli(['run', APP, '--agent', 'oracle', '--json']);
    expect(oracle.code, oracle.stderr).toBe(0);
    expect(JSON.parse(oracle.stdout)).toMatchObject({ status: 'succeeded', verifier: { reward: 1 } });

    const wrong = await cli(['run', APP, '--agent', `scripted:${AGENTS}/app-wrong.jsonl`, '--json']);
    expect(wrong.code).toBe(1);
    const s = JSON.parse(wrong.stdout);
    expect(s).toMatchObject({ status: 'failed', verifier: { success: false, reward: 0 } });
    const evs = events(s.trace);
    const result = evs.find((e) => e.type === 'tool_result') as { result: { stdout: string } };
    // The agent starts in the Dockerfile's WORKDIR, among the image's own files there.
    expect(result.result.stdout).toMatch(/^\/app\n/);
    expect(result.result.stdout).toContain('greeting.txt');
    const header = evs[0] as { task: { sandbox: { workdir: string; image: string } } };
    expect(header.task.sandbox.workdir).toBe('/app');
    expect(header.task.sandbox.image).toMatch(/^stepbox-build:/);

    // A recorded task's image (built from its Dockerfile) is the user's to consent to.
    const refused = await cli([
      'fork',
      s.episode,
      '--at',
      '1',
      '--agent',
      `scripted:${AGENTS}/app-right.jsonl`,
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--allow-image');
    const fork = await cli([
      'fork',
      s.episode,
      '--at',
      '1',
      '--allow-image',
      '--agent',
      `scripted:${AGENTS}/app-right.jsonl`,
      '--json',
    ]);
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout)).toMatchObject({
      status: 'succeeded',
      fork_step: 1,
      verifier: { reward: 1 },
    });
  });

  it('allow_internet = true gets the network only with --allow-network, and a fork of it asks again', async () => {
    const dir = join(env.dir, 'online-task');
    cpSync(HELLO, dir, { recursive: true });
    const toml = readFileSync(join(dir, 'task.toml'), 'utf8').replace(
      '[environment]',
      '[environment]\nallow_internet = true',
    );
    writeFileSync(join(dir, 'task.toml'), toml);
    const offline = await cli(['run', dir, '--agent', 'oracle', '--json']);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain('allow_internet = true, but the sandbox stays offline');
    const off = events(JSON.parse(offline.stdout).trace)[0] as { task: { sandbox: { network: string } } };
    expect(off.task.sandbox.network).toBe('none');

    const online = await cli(['run', dir, '--agent', 'oracle', '--allow-network', '--json']);
    // An engine started with `--bridge=none` has no network to give: refused, naming it.
    if (online.code === 3) {
      expect(online.stderr).toContain('network "bridge"');
      return;
    }
    expect(online.code, online.stderr).toBe(0);
    const s = JSON.parse(online.stdout);
    const on = events(s.trace)[0] as { task: { sandbox: { network: string } } };
    expect(on.task.sandbox.network).toBe('bridge');
    const refused = await cli(['fork', s.episode, '--at', '1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--allow-network');
  });

  it('ab records what of a world stepbox leaves out in each side’s episodes, as run and batch do', async () => {
    const config = join(env.dir, 'ab-side.json');
    writeFileSync(config, '{}');
    const r = await cli([
      'ab',
      '--a',
      config,
      '--b',
      config,
      `${FIX}/dataset/hello-file`,
      '--agent',
      'oracle',
      '--episodes',
      '1',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { episodes: { side: string; episode: string }[] };
    expect(report.episodes).toHaveLength(2);
    for (const e of report.episodes) {
      const branches = join(env.home, 'episodes', e.episode, 'branches');
      const [trace] = readdirSync(branches).filter((f) => f.endsWith('.jsonl.gz'));
      const header = events(join(branches, trace))[0] as { world_warnings?: string[] };
      expect(header.world_warnings, `side ${e.side}`).toEqual(
        expect.arrayContaining([expect.stringContaining('[environment] gpus is not honoured')]),
      );
    }
  });

  it('a folder of task folders is a dataset for batch (N trials each, sandboxes recycled between them); each trial exports as ATIF', async () => {
    const out = join(env.dir, 'batch');
    const batch = await cli([
      'batch',
      `${FIX}/dataset`,
      '--agent',
      'oracle',
      '--episodes',
      '2',
      '--concurrency',
      '1',
      '--out',
      out,
      '--json',
    ]);
    expect(batch.code, batch.stderr).toBe(0);
    const b = JSON.parse(batch.stdout);
    expect(b.slots).toHaveLength(4);
    expect(b.slots.every((slot: { status: string }) => slot.status === 'succeeded')).toBe(true);
    // Each episode's header says what of its world stepbox left out, as a single run's does:
    // hello-file's task.toml asks for gpus (the walk: batch episodes had no world_warnings).
    const hello = b.slots.find((slot: { task: string }) => slot.task.includes('hello-file'));
    const branches = join(env.home, 'episodes', hello.episode, 'branches');
    const [trace] = readdirSync(branches).filter((f) => f.endsWith('.jsonl.gz'));
    const header = events(join(branches, trace))[0] as { world_warnings?: string[] };
    expect(header.world_warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('[environment] gpus is not honoured')]),
    );
    const atif = join(env.dir, 'atif');
    const exp = await cli(['export', out, '--format', 'atif', '--out', atif]);
    expect(exp.code, exp.stderr).toBe(0);
    const files = readdirSync(atif).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(4);
    for (const f of files) {
      const doc = JSON.parse(readFileSync(join(atif, f), 'utf8'));
      expect(doc.schema_version).toMatch(/^ATIF-/);
      expect(doc.extra.stepbox.verifier).toMatchObject({ success: true, reward: 1 });
    }
  });
});
