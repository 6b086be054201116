import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBatch } from '../../electron/engine/batch/batch-runner.js';
import { loadTask } from '../../electron/engine/harness/load-task.js';
import { agentFolderOf } from '../../shared/start-paths.js';
import { inWindowWords } from '../../renderer/src/stores/window-words.js';
import { PROJECT_ROOT, runCli } from '../support/cli.js';

const TASK = resolve(PROJECT_ROOT, 'resources/agents/python-inside');

describe('--agent-dir on batch, case run and ab; the start form\'s "Agent folder"', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-agent-dir-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));
  const env = () => ({ env: { STEPBOX_HOME: home, DOCKER_HOST: 'tcp://127.0.0.1:9' } });

  it('the form resolves the folder from the task folder, as a script path; an empty field is none', () => {
    expect(agentFolderOf('agent', '/t/hello')).toBe('/t/hello/agent');
    expect(agentFolderOf(' ../shared/bin ', '/t/hello')).toBe('/t/shared/bin');
    expect(agentFolderOf('/opt/mine', '/t/hello')).toBe('/opt/mine');
    expect(agentFolderOf('  ', '/t/hello')).toBeNull();
    // The engine's flag, said in the form's words.
    expect(inWindowWords('--agent-dir puts files at /opt/agent')).toBe(
      '“Agent folder” puts files at /opt/agent',
    );
  });

  it('batch.json keeps the folder absolute, so --resume runs the agent with it from anywhere', () => {
    const t = loadTask(TASK);
    if (!t.ok) throw new Error(t.error.message);
    const { batch } = createBatch({
      dir: join(home, 'b'),
      home,
      tasks: [{ path: join(TASK, 'task.json'), task: t.value }],
      agent: 'sandbox:python3 /opt/agent/agent.py',
      agentDir: 'resources/agents/python-inside',
      episodes: 1,
      concurrency: 1,
    });
    expect(batch.agent_dir).toBe(resolve('resources/agents/python-inside'));
  });

  it('batch: --agent-dir for an agent that is not sandbox: is a usage error before anything runs', async () => {
    const r = await runCli(
      ['batch', TASK, '--agent', 'scripted:model.jsonl', '--agent-dir', TASK, '--out', join(home, 'b')],
      env(),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--agent-dir puts files at \/opt\/agent for a sandbox: agent.*drop --agent-dir/);
    const resumed = await runCli(['batch', '--resume', join(home, 'b'), '--agent-dir', TASK], env());
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('--agent-dir');
  });

  it('case run: --agent-dir needs your own sandbox: agent', async () => {
    const alone = await runCli(['case', 'run', 'reward-hacking-edit-test', '--agent-dir', TASK], env());
    expect(alone.code, alone.stderr).toBe(2);
    expect(alone.stderr).toMatch(/--agent-dir goes with your own --agent 'sandbox:CMD'/);
    const exec = await runCli(
      ['case', 'run', 'reward-hacking-edit-test', '--agent', 'exec:true', '--agent-dir', TASK],
      env(),
    );
    expect(exec.code, exec.stderr).toBe(2);
    expect(exec.stderr).toMatch(/exec:true is not one/);
  });

  it('ab: a side whose agent cannot take the folder is named', async () => {
    const a = join(home, 'a.json');
    const b = join(home, 'b.json');
    writeFileSync(a, JSON.stringify({ agent: 'sandbox:python3 /opt/agent/agent.py', agent_dir: TASK }));
    writeFileSync(b, JSON.stringify({ agent: 'manual', agent_dir: TASK }));
    const r = await runCli(['ab', '--a', a, '--b', b, TASK], env());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/side B: --agent-dir puts files at \/opt\/agent .*manual is not one/);
  });
});
