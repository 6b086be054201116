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

  it('--step: Enter steps, r N rolls back (saying what it dropped), i injects, c continues onto a new branch', async () => {
    const run = await cli(
      ['run', TASK, '--agent', AGENT, '--step', '--json'],
      '\n\ni\nuser\nearly\n\nr 1\ni\nuser\nhello\nc\n',
    );
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.branch).not.toBe(summary.episode);
    expect(summary).toMatchObject({ status: 'succeeded', steps: 6 });
    // The message injected after step 2 is not in the branch from step 1: said as the window says it.
    expect(run.stderr).toContain(
      'rolled back to step 1; continuing creates a new branch\nDropped: 1 message injected after step 2. Redo what the next step needs.\n',
    );
    expect(run.stderr).toContain('injected user: hello');
  });

  it('a manual agent whose input ends stops the episode: it exits, says why and keeps the trace', async () => {
    // One decision, then stdin closes: the run printed the prompt twice and waited until killed.
    const call = JSON.stringify({ name: 'execute_shell', arguments: { command: 'echo kept > kept.txt' } });
    const run = await runCli(['run', 'resources/tasks/hello-python', '--agent', 'manual', '--json'], {
      env: { STEPBOX_HOME: env.home },
      timeoutMs: 60_000,
      input: `${call}\n`,
    });
    expect(run.signal, run.stderr).toBeNull();
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr.match(/step \d+ — tool call as JSON/g)).toEqual([
      'step 1 — tool call as JSON',
      'step 2 — tool call as JSON',
    ]);
    expect(run.stderr).toContain(
      'input ended (stdin closed), so no one is left to answer: the episode stops before step 2; its trace keeps the steps so far and closes as interrupted (input_ended)',
    );
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      status: 'interrupted',
      end_reason: 'input_ended',
      steps: 1,
      verifier: null,
    });
    // The trace is whole: step 1's call and result, then its end.
    const show = await cli(['show', summary.branch, '--json']);
    expect(show.code, show.stderr).toBe(0);
    const shown = JSON.parse(show.stdout);
    expect(shown).toMatchObject({ status: 'interrupted', end_reason: 'input_ended', steps_done: 1 });
    expect(shown.steps.map((s: { step: number }) => s.step)).toEqual([1]);
    expect(shown.steps[0].results[0]).toMatchObject({ name: 'execute_shell', exit_code: 0 });
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
