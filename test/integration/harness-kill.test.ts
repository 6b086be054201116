import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { runCli, startCli, waitFor } from '../support/cli.js';
import { call, final, script, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

describe('kill -9 of a running `stepbox run`', () => {
  it('leaves a readable trace, an interrupted episode, and resume continues it', async () => {
    const taskPath = join(env.dir, 'task.json');
    writeFileSync(
      taskPath,
      JSON.stringify({ name: 'slow', goal: 'survive a crash', verifier: { command: 'grep -q 3 count.txt' } }),
    );
    const agent = script(env.dir, 'slow.jsonl', [
      call('execute_shell', { command: 'echo 1 > count.txt' }),
      call('execute_shell', { command: 'echo 2 >> count.txt' }),
      call('execute_shell', { command: 'sleep 4; echo 3 >> count.txt' }),
      call('execute_shell', { command: 'cat count.txt' }),
      final('counted'),
    ]);
    const child = startCli(['run', taskPath, '--agent', `scripted:${agent}`, '--json'], {
      env: { STEPBOX_HOME: env.home },
    });
    const episodes = join(env.home, 'episodes');
    // Wait for the trace to show the slow step's tool call: the process is mid-step.
    const tracePath = await waitFor('the slow step to start', () => {
      if (!existsSync(episodes)) return null;
      for (const ep of readdirSync(episodes)) {
        const p = join(episodes, ep, 'branches', `${ep}.jsonl`);
        if (existsSync(p) && readFileSync(p, 'utf8').includes('sleep 4')) return p;
      }
      return null;
    });
    child.child.kill('SIGKILL');
    const killed = await child.done;
    expect(killed.signal).toBe('SIGKILL');
    const trace = readTraceFile(tracePath);
    expect(trace.end).toBeNull();
    expect(trace.events.filter((e) => e.type === 'snapshot').map((e) => e.step)).toEqual([0, 1, 2]);
    const episode = trace.header.episode;

    const resumed = await runCli(['resume', episode, '--json'], {
      env: { STEPBOX_HOME: env.home },
      timeoutMs: 90_000,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout);
    expect(summary).toMatchObject({
      status: 'succeeded',
      steps: 5,
      parent: episode,
      fork_step: 2,
      verifier: { success: true },
    });
    const marked = readTraceFile(`${tracePath}.gz`);
    expect(marked.end).toMatchObject({ status: 'interrupted' });
  });

  it('Ctrl+C (SIGINT) closes the trace as interrupted and destroys the sandbox', async () => {
    const taskPath = join(env.dir, 'task-int.json');
    writeFileSync(taskPath, JSON.stringify({ name: 'sigint', goal: 'be interrupted' }));
    const agent = script(env.dir, 'int.jsonl', [
      call('execute_shell', { command: 'echo start' }),
      call('execute_shell', { command: 'sleep 30' }),
      final('never'),
    ]);
    const child = startCli(['run', taskPath, '--agent', `scripted:${agent}`], {
      env: { STEPBOX_HOME: env.home },
    });
    const episodes = join(env.home, 'episodes');
    const tracePath = await waitFor('the sleep to start', () => {
      for (const ep of existsSync(episodes) ? readdirSync(episodes) : []) {
        const p = join(episodes, ep, 'branches', `${ep}.jsonl`);
        if (existsSync(p) && readFileSync(p, 'utf8').includes('sleep 30')) return p;
      }
      return null;
    });
    child.child.kill('SIGINT');
    const done = await child.done;
    expect(done.code).toBe(130);
    const trace = readTraceFile(`${tracePath}.gz`);
    expect(trace.end).toMatchObject({ status: 'interrupted', end_reason: 'stopped' });
    const owners = execFileSync(
      'docker',
      ['ps', '-a', '--filter', 'label=stepbox', '--format', '{{.Label "stepbox.owner"}}'],
      {
        encoding: 'utf8',
      },
    );
    expect(owners).not.toContain(`"pid":${child.child.pid},`);
  });
});
