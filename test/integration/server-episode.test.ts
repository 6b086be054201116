// The app services on the real engine, through web mode's WebSocket: start the bundled
// hello-python sample, step it, type into a real TTY, roll back, fork, run a what-if, and
// stop — then no container of this server is left. Live episodes take warm sandboxes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createClient,
  createWebSocketTransport,
  webSocketUrlFor,
  type StepboxClient,
  type Transport,
  type WebSocketLike,
} from '../../shared/contract/index.js';
import { startServer, type RunningServer } from '../../electron/server.js';
import { nextEvent, value } from '../support/contract.js';

function containers(id: string): boolean {
  const out = execFileSync('docker', ['ps', '-a', '-q', '--no-trunc', '--filter', `id=${id}`], {
    encoding: 'utf8',
  });
  return out.trim().length > 0;
}

function created(id: string): number {
  return Date.parse(
    execFileSync('docker', ['inspect', '-f', '{{.Created}}', id], { encoding: 'utf8' }).trim(),
  );
}

describe('web mode on the real engine', () => {
  let home: string;
  let server: RunningServer;
  let transport: Transport & { close(): void };
  let client: StepboxClient;
  const sandboxes: string[] = [];

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-web-'));
    server = await startServer({ port: 0, home });
    transport = createWebSocketTransport(
      webSocketUrlFor(server.url),
      (u) => new WebSocket(u) as unknown as WebSocketLike,
    );
    client = createClient(transport);
  });
  afterAll(async () => {
    transport?.close();
    await server?.close();
    for (const id of sandboxes) expect(containers(id), `container ${id} left behind`).toBe(false);
    rmSync(home, { recursive: true, force: true });
  });

  it('steps a sample, types in its terminal, rolls back, forks, asks what-if and stops', async () => {
    const started = value(await client.episode.start({ task: { kind: 'sample', id: 'hello-python' } }));
    expect(started.step).toBe(0);
    const id = started.branch;
    const info = value(await client.sandbox.info({ id }));
    expect(info.sandbox?.network).toBe('none');
    sandboxes.push(info.sandbox?.id ?? '');

    value(await client.episode.step({ id }));
    const two = value(await client.episode.step({ id }));
    expect(two.step).toBe(2);
    const detail = value(await client.episode.stepDetail({ id, step: 2 }));
    expect(detail.calls[0].call.name).toBe('write_file');
    expect(detail.files.find((f) => f.path === 'greet.py')?.after).toContain('sys.argv[2]');

    // A real TTY into the live sandbox.
    const { terminal } = value(await client.terminal.open({ id, cols: 90, rows: 30 }));
    const tty = nextEvent(
      transport,
      'terminal.data',
      (p) => p.terminal === terminal && /\/dev\/pts\/\d+/.test(p.data),
      20_000,
    );
    value(await client.terminal.input({ terminal, data: 'tty\r' }));
    await tty;
    const size = nextEvent(
      transport,
      'terminal.data',
      (p) => p.terminal === terminal && /\b40 100\b/.test(p.data),
      20_000,
    );
    value(await client.terminal.resize({ terminal, cols: 100, rows: 40 }));
    value(await client.terminal.input({ terminal, data: 'stty size\r' }));
    await size;
    value(await client.terminal.close({ terminal }));
    // What a person typed is in the trace, as human_command events at the current step.
    const human = value(await client.episode.trace({ id, limit: 5000 })).events.filter(
      (e) => e.type === 'human_command',
    );
    expect(human).toContainEqual(expect.objectContaining({ command: 'tty', step: 2, source: 'human' }));

    // What-if at step 3 with other arguments: the live sandbox does not change.
    const before = value(await client.episode.stepDetail({ id, step: 2 })).tree_hash;
    const whatIf = value(
      await client.episode.whatIf({
        id,
        step: 3,
        call: { name: 'execute_shell', arguments: { command: 'cat greet.py; touch new.txt' } },
      }),
    );
    expect(whatIf.result.stdout).toContain('sys.argv[2]');
    const live = value(await client.episode.open({ id }));
    expect(live.state?.step).toBe(2);
    expect(value(await client.episode.stepDetail({ id, step: 2 })).tree_hash).toBe(before);

    // Roll back to step 1: greet.py is gone again, in the branch the rollback made at once
    // (paused at step 1, under the branch rolled back; issue 33, item 3).
    const rolled = value(await client.episode.rollback({ id, step: 1 }));
    expect(rolled).toMatchObject({ step: 1, state: 'paused' });
    expect(rolled.branch).not.toBe(id);
    const rolledView = value(await client.episode.open({ id: rolled.branch }));
    expect(rolledView.summary).toMatchObject({ parent_branch: id, fork_step: 1 });
    expect(rolledView.rows.at(-1)?.step).toBe(1);
    expect(rolledView.branches.find((b) => b.branch === id)?.end_reason).toBe('rolled_back_to_1');
    const { terminal: t2 } = value(await client.terminal.open({ id: rolled.branch, cols: 80, rows: 24 }));
    const gone = nextEvent(
      transport,
      'terminal.data',
      (p) => p.terminal === t2 && p.data.includes('No such file'),
      20_000,
    );
    value(await client.terminal.input({ terminal: t2, data: 'ls greet.py\r' }));
    await gone;
    value(await client.terminal.close({ terminal: t2 }));

    const fork = value(await client.episode.fork({ id: rolled.branch, step: 1 }));
    expect(fork.branch).not.toBe(id);
    const forkInfo = value(await client.sandbox.info({ id: fork.branch }));
    sandboxes.push(forkInfo.sandbox?.id ?? '');
    const lib = value(await client.library.list({}));
    const ep = lib.episodes.find((e) => e.episode === started.episode);
    expect(ep?.branches.map((b) => b.branch)).toContain(fork.branch);
    // A live fork is judged on its own trace: neither its inherited steps nor its missing end are faults.
    const forkView = value(await client.episode.open({ id: fork.branch }));
    expect(forkView.flags.filter((f) => f.rule === 'structure')).toEqual([]);

    expect(value(await client.episode.stop({ id: fork.branch })).status).toBe('interrupted');
    expect(value(await client.episode.stop({ id: rolled.branch })).status).toBe('interrupted');
    // Stopped sandboxes go back to the warm pool (one kept per config, reset) or are destroyed.
    expect(sandboxes.filter((s) => containers(s)).length, 'containers kept after stop').toBeLessThanOrEqual(
      1,
    );

    // Re-execution of the recorded branch in a fresh sandbox reproduces it.
    const replay = value(await client.episode.replayVerify({ id }));
    expect(replay).toMatchObject({ identical: true, first_divergence: null, workspace_diverged_at: null });
    expect(replay.steps_replayed).toBeGreaterThanOrEqual(1);
  });

  it('lets a person drive a manual agent one decision at a time', async () => {
    const asked = Date.now();
    const { branch } = value(
      await client.episode.start({ task: { kind: 'sample', id: 'hello-python' }, agent: 'manual' }),
    );
    const warm = value(await client.sandbox.info({ id: branch })).sandbox?.id ?? '';
    sandboxes.push(warm);
    // The start was a hand-over from the warm pool: its container existed before it was asked for.
    expect(created(warm)).toBeLessThan(asked);
    value(
      await client.episode.decide({
        id: branch,
        call: { name: 'execute_shell', arguments: { command: 'echo by hand' } },
      }),
    );
    expect(value(await client.episode.step({ id: branch })).step).toBe(1);
    const detail = value(await client.episode.stepDetail({ id: branch, step: 1 }));
    expect(detail.calls[0].result?.stdout).toBe('by hand\n');

    // F10 with no decision: the agent waits for a person. Pause ends that wait: the episode
    // is paused at step 1 (not working), saying what it waits for; a decision then continues.
    const running = nextEvent(
      transport,
      'episode.state',
      (p) => p.branch === branch && p.state === 'running',
      20_000,
    );
    const stepping = client.episode.step({ id: branch });
    await running;
    value(await client.episode.pause({ id: branch }));
    const paused = value(await stepping);
    expect(paused).toMatchObject({ state: 'paused', step: 1, reason: { kind: 'paused' } });
    expect(paused.reason?.message).toMatch(/step 2 waits for your decision/);
    value(
      await client.episode.decide({
        id: branch,
        call: { name: 'execute_shell', arguments: { command: 'echo second' } },
      }),
    );
    expect(value(await client.episode.step({ id: branch })).step).toBe(2);
    expect(value(await client.episode.stepDetail({ id: branch, step: 2 })).calls[0].result?.stdout).toBe(
      'second\n',
    );

    // One long-lived stats stream of the live sandbox.
    const { subscription } = value(await client.stats.subscribe({ id: branch }));
    const sample = await nextEvent(
      transport,
      'sandbox.stats',
      (p) => p.subscription === subscription,
      20_000,
    );
    expect(sample.memory_limit_bytes).toBeGreaterThan(0);
    expect(sample.memory_bytes).toBeGreaterThan(0);
    value(await client.stats.unsubscribe({ subscription }));
    value(await client.episode.stop({ id: branch }));

    // Reopen the recorded branch at step 0 in a fresh sandbox (a new live controller).
    const reopened = value(await client.episode.reopen({ id: branch, step: 0 }));
    const box = value(await client.sandbox.info({ id: reopened.branch })).sandbox;
    sandboxes.push(box?.id ?? '');
    expect(reopened.state.step).toBe(0);
    value(await client.episode.stop({ id: reopened.branch }));
  });
});
