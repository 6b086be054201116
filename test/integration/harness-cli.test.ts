import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

const TASK = 'resources/tasks/notes-memory';
const AGENT = 'scripted:resources/tasks/notes-memory/agent.jsonl';
const cli = (args: string[], input?: string) =>
  runCli(args, {
    env: { STEPBOX_HOME: env.home },
    timeoutMs: 90_000,
    ...(input === undefined ? {} : { input }),
  });

describe('stepbox run / fork / open / replay on Docker', () => {
  it('runs, forks, opens a step and re-executes a sample task', async () => {
    const run = await cli(['run', TASK, '--agent', AGENT, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      status: 'succeeded',
      end_reason: 'final_answer',
      steps: 6,
      verifier: { success: true, exit_code: 0 },
    });
    expect(summary.branch).toBe(summary.episode);
    expect(summary.trace).toMatch(/\.jsonl\.gz$/);

    const fork = await cli(['fork', summary.episode, '--at', '3', '--json']);
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout)).toMatchObject({
      status: 'succeeded',
      steps: 6,
      parent: summary.episode,
      fork_step: 3,
    });

    const open = await cli([
      'open',
      summary.episode,
      '--at',
      '3',
      '--exec',
      'ls; test -f answer.txt || echo no-answer-yet',
    ]);
    expect(open.code, open.stderr).toBe(0);
    expect(open.stdout).toContain('facts.txt');
    expect(open.stdout).toContain('no-answer-yet');

    const replay = await cli(['replay', summary.episode, '--verify', '--json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({
      replayed: 'actions',
      verdict: 'identical',
      diverged_at: null,
      workspace_diverged_at: null,
      verifier_match: true,
    });

    const view = await cli(['replay', summary.episode]);
    expect(view.code).toBe(0);
    expect(view.stdout).toMatch(/step 1 {2}→ lookup/);
  });

  it('--step: Enter steps, r N rolls back, i injects, c continues onto a new branch', async () => {
    const run = await cli(
      ['run', TASK, '--agent', AGENT, '--step', '--json'],
      '\n\n\nr 1\ni\nuser\nhello\nc\n',
    );
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.branch).not.toBe(summary.episode);
    expect(summary).toMatchObject({ status: 'succeeded', steps: 6 });
    expect(run.stderr).toContain('rolled back to step 1');
    expect(run.stderr).toContain('injected user: hello');
  });

  it('exit 2 with the line named for a broken script; exit 2 for a bad task', async () => {
    const bad = await cli(['run', TASK, '--agent', 'scripted:package.json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/line \d+ is not JSON/);
    const noTask = await cli(['run', 'nope/task.json', '--agent', AGENT]);
    expect(noTask.code).toBe(2);
  });

  it('--keep leaves the sandbox running, prints its id and exits', async () => {
    const run = await cli(['run', TASK, '--agent', AGENT, '--keep', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const id = JSON.parse(run.stdout).sandbox as string;
    expect(run.stderr).toContain(`sandbox kept: ${id}`);
    try {
      const state = execFileSync('docker', ['inspect', '-f', '{{.State.Running}}', id], { encoding: 'utf8' });
      expect(state.trim()).toBe('true');
    } finally {
      execFileSync('docker', ['rm', '-f', id]);
    }
  });
});
