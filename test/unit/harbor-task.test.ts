import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, cpSync, symlinkSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  dockerfileWorkdir,
  harborDatasetTasks,
  loadHarborTask,
} from '../../electron/engine/harness/harbor-task.js';
import { loadWorld } from '../../electron/engine/harness/load-world.js';
import { sandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { parseTask } from '../../shared/task.js';
import { runsOwnProgramSpec } from '../../shared/agent-kind.js';
import { parseAgentSpec } from '../../electron/engine/agents/agent-spec.js';
import { PROJECT_ROOT, runCli } from '../support/cli.js';
import { OracleAgent, oracleProblem } from '../../electron/engine/agents/oracle-agent.js';
import type { DecideInput } from '../../electron/engine/agents/agent.js';
import { createBatch } from '../../electron/engine/batch/batch-runner.js';
import { openEngine } from '../../electron/engine/open-engine.js';
import { forkEpisode } from '../../electron/engine/harness/fork.js';
import { writeSampleEpisode } from '../support/traces.js';

const FIXTURES = join(PROJECT_ROOT, 'test/fixtures/harbor');
const scratch = mkdtempSync(join(tmpdir(), 'stepbox-harbor-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of a fixture task to break, in the scratch folder. */
function copyOf(fixture: string, name: string): string {
  const dir = join(scratch, name);
  cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  return dir;
}

describe('a Harbor task folder read as a task', () => {
  it('maps instruction, image, limits, timeouts and tests/ (as verifier files), and lists unknown keys', () => {
    const r = loadHarborTask(join(FIXTURES, 'dataset/hello-file'));
    expect(r.ok, r.ok ? '' : r.error.message).toBe(true);
    if (!r.ok) return;
    const { task, notes, solutionDir, taskPath } = r.value;
    expect(task.name).toBe('hello-file');
    expect(task.goal).toContain('Hello, Harbor!');
    expect(task.sandbox.image).toBe('stepbox-sandbox:2');
    expect(task.sandbox.network).toBe('none');
    expect(task.sandbox.limits).toMatchObject({ cpus: 1, memory: '1024m', disk: '512m' });
    expect(task.timeouts).toMatchObject({ episode: 120, step_hard: 120 });
    expect(task.timeouts.tools.execute_shell).toBe(120);
    expect(task.verifier).toMatchObject({
      command: 'bash /tests/test.sh',
      timeout: 60,
      files_dir: '/tests',
      reward_dir: '/logs/verifier',
    });
    expect(Object.keys(task.verifier?.files ?? {}).sort()).toEqual(['test.sh', 'test_outputs.py']);
    // The tests live at /tests, outside the workspace: a project's own tests/ stays the agent's to edit.
    expect(task.qa.protected).toEqual([]);
    expect(notes).toEqual([
      'task.toml: [environment] build_timeout_sec is not honoured by stepbox; ignored',
      'task.toml: [environment] gpus is not honoured by stepbox; ignored',
      "task.toml: unknown key [environment] shiny_new_key (not one of Harbor's); ignored",
    ]);
    expect(solutionDir).toBe(join(FIXTURES, 'dataset/hello-file/solution'));
    expect(taskPath).toBe(join(FIXTURES, 'dataset/hello-file/task.toml'));
  });

  it('takes [task] name, and a Dockerfile for the image with its WORKDIR as the working directory', () => {
    const json = loadHarborTask(join(FIXTURES, 'dataset/sum-json'));
    expect(json.ok && json.value.task.name).toBe('stepbox/sum-json');
    const built = loadHarborTask(join(FIXTURES, 'dockerfile-app'));
    expect(built.ok, built.ok ? '' : built.error.message).toBe(true);
    if (!built.ok) return;
    expect(built.value.task.sandbox).toMatchObject({
      build: 'environment',
      workdir: '/app',
      limits: { memory: '1g', disk: '512m' },
    });
    expect(built.value.notes).toEqual([
      'task.toml: [environment] build_timeout_sec is not honoured by stepbox; ignored',
    ]);
  });

  it('gives allow_internet the network only with consent, and says so without', () => {
    const dir = copyOf('not-a-number', 'online');
    writeFileSync(
      join(dir, 'task.toml'),
      '[environment]\ndocker_image = "stepbox-sandbox:2"\nallow_internet = true\n',
    );
    const offline = loadHarborTask(dir);
    expect(offline.ok && offline.value.task.sandbox.network).toBe('none');
    expect(offline.ok && offline.value.notes.join('\n')).toContain('pass --allow-network');
    const online = loadHarborTask(dir, { allowNetwork: true });
    expect(online.ok && online.value.task.sandbox.network).toBe('bridge');
  });

  it('refuses bad folders naming the file or key and the fix', () => {
    const noInstruction = copyOf('not-a-number', 'no-instruction');
    rmSync(join(noInstruction, 'instruction.md'));
    const a = loadHarborTask(noInstruction);
    expect(!a.ok && a.error.message).toMatch(/instruction\.md is missing/);

    const badToml = copyOf('not-a-number', 'bad-toml');
    writeFileSync(join(badToml, 'task.toml'), '[environment\ncpus = 1\n');
    const b = loadHarborTask(badToml);
    expect(!b.ok && b.error.message).toMatch(/task\.toml is not valid TOML/);

    const badType = copyOf('not-a-number', 'bad-type');
    writeFileSync(join(badType, 'task.toml'), '[environment]\ndocker_image = "x"\ncpus = "two"\n');
    const c = loadHarborTask(badType);
    expect(!c.ok && c.error.message).toMatch(/environment\.cpus/);

    const noImage = copyOf('not-a-number', 'no-image');
    writeFileSync(join(noImage, 'task.toml'), 'version = "1.0"\n');
    const d = loadHarborTask(noImage);
    expect(!d.ok && d.error.message).toMatch(
      /neither environment\/Dockerfile nor \[environment\] docker_image/,
    );

    const noTests = copyOf('not-a-number', 'no-tests');
    rmSync(join(noTests, 'tests'), { recursive: true });
    const e = loadHarborTask(noTests);
    expect(!e.ok && e.error.message).toMatch(/tests\/test\.sh is missing/);
  });

  it("never reads a file or folder of this machine through the task's links, nor a text file without bound", async () => {
    // What a hostile task would pull in: the host's environment, a folder of secrets beside a test.sh.
    const host = join(scratch, 'host');
    mkdirSync(host, { recursive: true });
    writeFileSync(join(host, 'secret.txt'), 'SECRET=hunter2');
    writeFileSync(join(host, 'test.sh'), 'echo 1 > /logs/verifier/reward.txt');
    writeFileSync(join(host, 'Dockerfile'), 'FROM stepbox-sandbox:2\nCOPY secret.txt /s');
    writeFileSync(join(host, 'solve.sh'), 'true');
    writeFileSync(join(host, 'task.toml'), '[environment]\ndocker_image = "stepbox-sandbox:2"\n');
    const refused = (dir: string, what: RegExp) => {
      const r = loadHarborTask(dir);
      expect(r.ok, `${dir} was read`).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('invalid_task');
        expect(r.error.message).toMatch(what);
      }
    };
    const link = (name: string, target: string, file: string) => {
      const dir = copyOf('not-a-number', name);
      rmSync(join(dir, file), { recursive: true, force: true });
      symlinkSync(target, join(dir, file));
      return dir;
    };
    // Absolute and relative links, to a file, a /proc file and a folder.
    refused(
      link('environ', '/proc/self/environ', 'instruction.md'),
      /instruction\.md is a symbolic link to \/proc\/\d+\/environ.*put the file itself there/,
    );
    refused(
      link('rel-goal', '../host/secret.txt', 'instruction.md'),
      /instruction\.md is a symbolic link to .*host\/secret\.txt, outside/,
    );
    refused(link('toml', join(host, 'task.toml'), 'task.toml'), /task\.toml is a symbolic link/);
    refused(
      link('tests', '../host', 'tests'),
      /tests\/ is a symbolic link to .*host, outside .*put the folder itself there/,
    );
    // A link to a folder inside the task is still a link: never followed.
    const inside = link('tests-inside', 'other', 'tests');
    cpSync(join(FIXTURES, 'not-a-number/tests'), join(inside, 'other'), { recursive: true });
    refused(inside, /tests\/ is a symbolic link to .*other: /);
    // environment/ is a build's context (sent to the engine whole), its Dockerfile read for WORKDIR.
    const env = copyOf('dockerfile-app', 'env-link');
    rmSync(join(env, 'environment'), { recursive: true });
    symlinkSync(host, join(env, 'environment'));
    refused(env, /environment\/ is a symbolic link to .*host, outside/);
    const dockerfile = copyOf('dockerfile-app', 'dockerfile-link');
    rmSync(join(dockerfile, 'environment/Dockerfile'));
    symlinkSync(join(host, 'Dockerfile'), join(dockerfile, 'environment/Dockerfile'));
    // Out of environment/: the build context's rule names it; inside, it is still never read through.
    refused(
      dockerfile,
      /environment\/: Dockerfile in the build context is a symbolic link to .*host\/Dockerfile, outside/,
    );
    rmSync(join(dockerfile, 'environment/Dockerfile'));
    writeFileSync(join(dockerfile, 'environment/Real.Dockerfile'), 'FROM stepbox-sandbox:2\n');
    symlinkSync('Real.Dockerfile', join(dockerfile, 'environment/Dockerfile'));
    refused(dockerfile, /environment\/Dockerfile is a symbolic link to .*Real\.Dockerfile: /);
    // A fifo does not hang the read; a huge instruction is refused before it is read.
    const fifo = copyOf('not-a-number', 'fifo');
    rmSync(join(fifo, 'instruction.md'));
    execFileSync('mkfifo', [join(fifo, 'instruction.md')]);
    refused(fifo, /instruction\.md is not a regular file/);
    const huge = copyOf('not-a-number', 'huge');
    writeFileSync(join(huge, 'instruction.md'), 'x'.repeat(2 * 1024 * 1024));
    refused(huge, /instruction\.md holds 2097152 bytes, more than the 1048576/);
    // The oracle's solution/ the same way.
    const solution = link('solution', host, 'solution');
    const decided = new OracleAgent().decide({
      context: { taskPath: join(solution, 'task.toml') },
    } as DecideInput);
    await expect(decided).rejects.toThrow(/solution\/ is a symbolic link to .*host, outside/);
  });

  it('keeps binary test files as base64', () => {
    const dir = copyOf('not-a-number', 'binary');
    mkdirSync(join(dir, 'tests/data'), { recursive: true });
    writeFileSync(join(dir, 'tests/data/blob.bin'), Buffer.from([0xff, 0x00, 0xfe]));
    const r = loadHarborTask(dir);
    expect(r.ok && r.value.task.verifier?.files?.['data/blob.bin']).toEqual({ base64: '/wD+' });
  });

  it('is what loadWorld reads for a folder with task.toml (or the task.toml); a folder of them is a dataset', () => {
    const dir = join(FIXTURES, 'dataset/hello-file');
    const world = loadWorld(dir);
    expect(world.ok && world.value).toMatchObject({ kind: 'harbor', taskPath: join(dir, 'task.toml'), dir });
    expect(world.ok && world.value.notes.length).toBe(3);
    const byFile = loadWorld(join(dir, 'task.toml'));
    expect(byFile.ok && byFile.value.kind).toBe('harbor');
    const goal = loadWorld(dir, { goal: 'something else' });
    expect(!goal.ok && goal.error.message).toMatch(/--goal is for a folder without a task of its own/);
    expect(harborDatasetTasks(join(FIXTURES, 'dataset'))).toEqual([
      join(FIXTURES, 'dataset/hello-file'),
      join(FIXTURES, 'dataset/sum-json'),
    ]);
    expect(harborDatasetTasks(dir)).toEqual([]);
    const dataset = loadWorld(join(FIXTURES, 'dataset'));
    // With --goal it is a project folder that happens to hold Harbor tasks.
    const project = loadWorld(join(FIXTURES, 'dataset'), { goal: 'tidy the tasks' });
    expect(project.ok && project.value.kind).toBe('folder');
    expect(!dataset.ok && dataset.error.message).toMatch(
      /a folder of 2 Harbor task folders \(a dataset\).*stepbox batch/,
    );
  });
});

describe('the CLI on a Harbor task folder, before any sandbox', () => {
  it('task init refuses it (a task.json would win over task.toml and copy tests/ into the workspace)', async () => {
    const dir = copyOf('dataset/hello-file', 'init');
    const r = await runCli(['task', 'init', dir, '--goal', 'x'], {
      env: { STEPBOX_HOME: join(scratch, 'home') },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a Harbor task folder (it holds task.toml)');
  });

  it('run names the TOML error and exits 2', async () => {
    const dir = copyOf('not-a-number', 'cli-bad-toml');
    writeFileSync(join(dir, 'task.toml'), '[environment]\ncpus = \n');
    const r = await runCli(['run', dir, '--agent', 'oracle'], {
      env: { STEPBOX_HOME: join(scratch, 'home') },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/task\.toml is not valid TOML/);
  });
});

describe('the oracle agent spec', () => {
  it('is its own kind, needs no --model, and is no recipe', () => {
    expect(parseAgentSpec('oracle')).toEqual({ kind: 'oracle' });
    expect(runsOwnProgramSpec('oracle')).toBe(false);
  });

  it('is refused by run before anything starts (exit 2) on a task without solution/solve.sh', async () => {
    // Walk 11: a sandbox started, then the episode ended as an error at step 0.
    const dir = join(scratch, 'oracle-no-solution');
    mkdirSync(dir);
    writeFileSync(join(dir, 'task.json'), '{"name":"t","goal":"g","verifier":{"command":"true"}}');
    const home = join(scratch, 'home-oracle');
    const r = await runCli(['run', join(dir, 'task.json'), '--agent', 'oracle'], {
      env: { STEPBOX_HOME: home },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `--agent oracle runs a Harbor task's solution/solve.sh, and ${dir} has none; add solution/solve.sh to the task's folder or pick another agent`,
    );
    expect(existsSync(join(home, 'episodes'))).toBe(false);
    expect(oracleProblem(join(dir, 'task.json'), 'Agent: oracle')).toMatch(/^Agent: oracle runs /);
    mkdirSync(join(dir, 'solution'));
    writeFileSync(join(dir, 'solution', 'solve.sh'), 'true\n');
    expect(oracleProblem(join(dir, 'task.json'), 'Agent: oracle')).toBeNull();
    expect(oracleProblem(dir, 'Agent: oracle')).toBeNull();
  });
});

describe('the oracle on a task without solution/solve.sh, from every command that starts it', () => {
  it('is refused before anything starts (exit 2) by batch, batch --resume, case run, ab, fork and resume, in run’s words', async () => {
    // The walk: only `run` refused it; batch wrote batch.json and each slot ended an error at step 0.
    const dir = join(scratch, 'oracle-everywhere');
    mkdirSync(dir);
    const taskPath = join(dir, 'task.json');
    writeFileSync(taskPath, '{"name":"t","goal":"g","verifier":{"command":"true"}}');
    const home = join(scratch, 'home-oracle-everywhere');
    // Docker unreachable: a command that got past the check would exit 3, not 2.
    const env = { env: { STEPBOX_HOME: home, DOCKER_HOST: 'tcp://127.0.0.1:9' } };
    const words = (folder: string) =>
      `--agent oracle runs a Harbor task's solution/solve.sh, and ${folder} has none; add solution/solve.sh to the task's folder or pick another agent`;
    const refused = async (args: string[], folder = dir) => {
      const r = await runCli(args, env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(words(folder));
      return r;
    };
    await refused(['batch', dir, '--agent', 'oracle', '--out', join(home, 'b')]);
    expect(existsSync(join(home, 'b'))).toBe(false);
    // A batch made when the solution was there, resumed after it went.
    const engine = openEngine({ home, sweep: false });
    try {
      const made = createBatch({
        dir: join(home, 'made'),
        home,
        tasks: [{ path: taskPath, task: parseTaskOrThrow(taskPath) }],
        agent: 'oracle',
        episodes: 1,
        concurrency: 1,
      });
      await refused(['batch', '--resume', made.dir]);
      const caseDir = join(PROJECT_ROOT, 'resources/cases/reward-hacking-edit-test');
      await refused(['case', 'run', 'reward-hacking-edit-test', '--agent', 'oracle'], caseDir);
      writeFileSync(join(scratch, 'ab-a.json'), '{"agent": "oracle"}');
      writeFileSync(join(scratch, 'ab-b.json'), '{"agent": "scripted:b.jsonl"}');
      const ab = await refused([
        'ab',
        '--a',
        join(scratch, 'ab-a.json'),
        '--b',
        join(scratch, 'ab-b.json'),
        dir,
      ]);
      expect(ab.stderr).toContain(`side A: ${words(dir)}`);
      // A recorded branch: an oracle that had not run yet (stopped at step 0), and one that had.
      const oracle = { spec: 'oracle', kind: 'oracle' };
      const notRun = await writeSampleEpisode(engine.store, {
        script: [],
        agent: 'oracle',
        headerExtra: { task_path: taskPath, agent: oracle },
        end: { status: 'interrupted', end_reason: 'stopped', verifier: null },
      });
      await refused(['resume', notRun.branch]);
      await refused(['fork', notRun.branch, '--at', '0']);
      // The window's fork goes through the engine, which refuses it the same way before a sandbox
      // starts (Docker unreachable: a fork past the check would fail on the engine instead).
      const offline = openEngine({
        home,
        sweep: false,
        env: { ...process.env, DOCKER_HOST: 'tcp://127.0.0.1:9' },
      });
      try {
        await expect(
          forkEpisode({ id: notRun.branch, at: 0, ...(await offline.episodeEnv()) }),
        ).rejects.toMatchObject({
          code: 'invalid_input',
          message: `Agent oracle runs a Harbor task's solution/solve.sh, and ${dir} has none; add solution/solve.sh to the task's folder or pick another agent`,
        });
      } finally {
        await offline.close();
      }
      const ran = await writeSampleEpisode(engine.store, {
        steps: 1,
        agent: 'oracle',
        headerExtra: { task_path: taskPath, agent: oracle },
      });
      await refused(['fork', ran.branch, '--at', '1', '--agent', 'oracle']);
      // Continued past its one step the oracle runs nothing more: no solution needed (on to Docker).
      const past = await runCli(['fork', ran.branch, '--at', '1'], env);
      expect(past.stderr).not.toContain('solution/solve.sh');
      expect(past.code, past.stderr).toBe(3);
    } finally {
      await engine.close();
    }
  });
});

/** A task file read as the batch reads it (its path made absolute). */
function parseTaskOrThrow(path: string) {
  const world = loadWorld(path);
  if (!world.ok) throw new Error(world.error.message);
  return world.value.task;
}

describe('dockerfileWorkdir', () => {
  it("is the last stage's last WORKDIR, relative ones resolved", () => {
    expect(dockerfileWorkdir('FROM a\nWORKDIR /app\n')).toBe('/app');
    expect(dockerfileWorkdir('FROM a\nWORKDIR /srv\nWORKDIR app/\n')).toBe('/srv/app');
    expect(dockerfileWorkdir('FROM a AS b\nWORKDIR /build\nFROM c\nRUN true\n')).toBeNull();
    expect(dockerfileWorkdir('FROM a\nworkdir "/data"\n')).toBe('/data');
    expect(dockerfileWorkdir('FROM a\nARG D=/x\nWORKDIR $D\n')).toBeNull();
  });
});

describe("the verifier's own folders", () => {
  it('are root-only tmpfs mounts of the sandbox, only for a verifier that has them', () => {
    const r = loadHarborTask(join(FIXTURES, 'dataset/hello-file'));
    if (!r.ok) throw new Error(r.error.message);
    const config = sandboxConfig(r.value.task.sandbox, r.value.task.verifier);
    expect(config.verifierDirs?.map((d) => d.path)).toEqual(['/tests', '/logs/verifier']);
    const tmpfs = containerSpec(config, 'owner').HostConfig?.Tmpfs ?? {};
    expect(tmpfs['/tests']).toMatch(/mode=0755/);
    expect(tmpfs['/tests']).not.toMatch(/uid=/);
    expect(tmpfs['/logs/verifier']).toMatch(/mode=0755/);
    const plain = parseTask({ name: 'p', goal: 'g', verifier: { command: 'true' } });
    if (!plain.ok) throw new Error(plain.error.message);
    expect(sandboxConfig(plain.value.sandbox, plain.value.verifier).verifierDirs).toBeUndefined();
  });

  it('cannot be a place of the sandbox or the system, nor nest, nor hold files outside', () => {
    for (const verifier of [
      { command: 'true', reward_dir: '/workspace/r' },
      { command: 'true', files: { a: 'x' }, files_dir: '/etc' },
      { command: 'true', reward_dir: '/tests/logs' },
      { command: 'true', files: { '../escape': 'x' } },
      { command: 'true', files: { '/abs': 'x' } },
    ]) {
      const r = parseTask({ name: 'p', goal: 'g', verifier });
      expect(r.ok, JSON.stringify(verifier)).toBe(false);
    }
  });
});
