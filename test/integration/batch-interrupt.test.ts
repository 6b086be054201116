import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BatchFile } from '../../electron/engine/batch/batch-file.js';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { parseJsonOutput, runCli, startCli, waitFor, type CliRun } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { call, final, script, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
let taskPath: string;
let agent: string;
beforeAll(() => {
  env = tempHome();
  taskPath = join(env.dir, 'task.json');
  writeFileSync(
    taskPath,
    JSON.stringify({
      name: 'count-slowly',
      goal: 'Write 1 and 2 to count.txt',
      verifier: { command: 'test "$(cat count.txt)" = "$(printf "1\\n2")"' },
    }),
  );
  agent = script(env.dir, 'agent.jsonl', [
    call('execute_shell', { command: 'echo 1 > count.txt' }),
    call('execute_shell', { command: 'sleep 1; echo 2 >> count.txt' }),
    final('done'),
  ]);
});
afterAll(() => env?.cleanup());

let n = 0;
/** A fresh home and batch folder per test: what one test leaves is not the next one's. */
function fresh(): { home: string; dir: string; cli: { env: Record<string, string> } } {
  n += 1;
  const home = join(env.dir, `home-${n}`);
  return { home, dir: join(env.dir, `batch-${n}`), cli: { env: { STEPBOX_HOME: home } } };
}

function readBatch(dir: string): BatchFile | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'batch.json'), 'utf8')) as BatchFile;
  } catch {
    return null; // not written yet
  }
}

function storedEpisodes(home: string): string[] {
  const dir = join(home, 'episodes');
  return existsSync(dir) ? readdirSync(dir).filter((e) => e.startsWith('ep-')) : [];
}

/** Containers a process created (their owner label records its pid) that still exist. */
function containersOf(pid: number): string[] {
  const out = execFileSync('docker', ['ps', '-a', '--format', '{{.ID}} {{.Label "stepbox.owner"}}'], {
    encoding: 'utf8',
  });
  return out
    .split('\n')
    .filter((l) => l.includes(`"pid":${pid},`))
    .map((l) => l.split(' ')[0]);
}

function startBatch(t: ReturnType<typeof fresh>, extraEnv: Record<string, string> = {}) {
  return startCli(
    [
      'batch',
      taskPath,
      '--agent',
      `scripted:${agent}`,
      '--episodes',
      '2',
      '--concurrency',
      '2',
      '--out',
      t.dir,
    ],
    { env: { ...t.cli.env, ...extraEnv }, timeoutMs: 120_000 },
  );
}

/** A stopped batch: exit 130, the summary on stdout, no internal error, its sandboxes gone. */
function expectStopped(run: CliRun, pid: number): void {
  expect(run.code, run.stderr).toBe(130);
  expect(run.stdout).toMatch(/^batch batch-\S+ in /);
  expect(run.stdout).toContain('unfinished');
  expect(run.stderr).not.toContain('internal error');
  expect(run.stderr).toContain('resume with stepbox batch --resume');
  expect(containersOf(pid)).toEqual([]);
}

/** Resuming runs every slot to success and keeps exactly the stopped episodes as superseded. */
async function expectResumes(t: ReturnType<typeof fresh>, stopped: readonly string[]): Promise<void> {
  const resumed = await runCli(['batch', '--resume', t.dir, '--json'], { ...t.cli, timeoutMs: 120_000 });
  expect(resumed.code, resumed.stderr).toBe(0);
  const after = parseJsonOutput<{ slots: BatchFile['slots'] }>(resumed).slots;
  expect(after.every((s) => s.status === 'succeeded')).toBe(true);
  const superseded = after.flatMap((s) => s.superseded);
  expect([...superseded].sort()).toEqual([...stopped].sort());
  expect(storedEpisodes(t.home).sort()).toEqual([...after.map((s) => s.episode!), ...superseded].sort());
}

/** Every episode in the store, each closed (compressed) with status `interrupted`. */
function interruptedEpisodes(home: string): string[] {
  const eps = storedEpisodes(home);
  for (const ep of eps) {
    const gz = join(home, 'episodes', ep, 'branches', `${ep}.jsonl.gz`);
    expect(existsSync(gz), `${ep} closed`).toBe(true);
    expect(readTraceFile(gz).end?.status, ep).toBe('interrupted');
  }
  return eps;
}

describeDocker('Ctrl+C and kills in `stepbox batch` lose and leave nothing', () => {
  it('Ctrl+C mid-episode: exit 130, the summary, traces closed interrupted, sandboxes destroyed', async () => {
    const t = fresh();
    const child = startBatch(t);
    await waitFor(
      'a step of an episode to have run',
      () => {
        for (const ep of storedEpisodes(t.home)) {
          const p = join(t.home, 'episodes', ep, 'branches', `${ep}.jsonl`);
          if (existsSync(p) && readFileSync(p, 'utf8').includes('"tool_result"')) return true;
        }
        return null;
      },
      90_000,
    );
    child.child.kill('SIGINT');
    const run = await child.done;
    expectStopped(run, child.child.pid!);
    const stopped = interruptedEpisodes(t.home);
    expect(stopped.length).toBeGreaterThan(0);
    const cut = readBatch(t.dir)!;
    expect(cut.slots.some((s) => s.status === 'succeeded')).toBe(false);
    await expectResumes(t, stopped);
  }, 240_000);

  it('Ctrl+C while episodes are still starting stops them: none runs on, resume runs each once', async () => {
    const t = fresh();
    const child = startBatch(t);
    await waitFor(
      'a slot to start',
      () => (readBatch(t.dir)?.slots.some((s) => s.starting !== null) ? true : null),
      90_000,
    );
    child.child.kill('SIGINT');
    const run = await child.done;
    expectStopped(run, child.child.pid!);
    const cut = readBatch(t.dir)!;
    // Nothing ran to its end after the stop: no slot has a result.
    expect(cut.slots.every((s) => s.status === null)).toBe(true);
    // An episode created before the stop took hold is closed interrupted; one never created left no trace.
    const stopped = interruptedEpisodes(t.home);
    for (const s of cut.slots) if (s.episode !== null) expect(stopped).toContain(s.episode);
    await expectResumes(t, stopped);
  }, 240_000);

  it('a SIGKILL between recording a slot and creating its episode, or during the creation, leaves nothing unknown', async () => {
    // Every creation point is killed at in test/unit/store-unfinished.test.ts; here, the batch's own and one of them.
    for (const point of ['batch-slot-recorded', 'episode-meta']) {
      const t = fresh();
      const run = await startBatch(t, { STEPBOX_TEST_CRASH_AT: point }).done;
      expect(run.signal, `${point}: ${run.stderr}`).toBe('SIGKILL');
      const cut = readBatch(t.dir)!;
      expect(
        cut.slots.some((s) => s.episode !== null),
        point,
      ).toBe(true);
      // The killed creation is not an episode; the next command sweeps its leftovers and resumes cleanly.
      expect(storedEpisodes(t.home), point).toEqual([]);
      await expectResumes(t, []);
    }
  }, 300_000);
});
