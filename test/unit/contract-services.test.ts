// The same app services behind two transports — in-memory and the web mode's WebSocket —
// must pass the same checks (VS Code's approach: the contract is tested without Electron).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  createClient,
  createMemoryTransport,
  createWebSocketTransport,
  webSocketUrlFor,
  type StepboxClient,
  type Transport,
  type WebSocketLike,
} from '../../shared/contract/index.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { startServer, type RunningServer } from '../../electron/server.js';
import { fakePorts } from '../support/contract-fakes.js';
import { nextEvent, value } from '../support/contract.js';

interface Rig {
  client: StepboxClient;
  transport: Transport;
  close(): Promise<void>;
}

const rigs: Record<string, () => Promise<Rig>> = {
  memory: async () => {
    const services = createAppServices(fakePorts().ports);
    const transport = createMemoryTransport(services);
    return { client: createClient(transport), transport, close: () => services.dispose() };
  },
  websocket: async () => {
    const server: RunningServer = await startServer({
      port: 0,
      ports: fakePorts().ports,
      rendererDir: '/nonexistent',
    });
    const transport = createWebSocketTransport(
      webSocketUrlFor(server.url),
      (url) => new WebSocket(url) as unknown as WebSocketLike,
    );
    return {
      client: createClient(transport),
      transport,
      close: async () => {
        transport.close();
        await server.close();
      },
    };
  },
};

describe.each(Object.keys(rigs))('contract over the %s transport', (name) => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await rigs[name]();
  });
  afterAll(() => rig.close());

  it('lists bundled tasks and cases and opens a case with its README', async () => {
    const { client } = rig;
    expect(value(await client.tasks.list()).tasks.map((t) => t.id)).toEqual(['hello']);
    expect(value(await client.cases.list()).cases[0]).toMatchObject({ id: 'loop', title: 'A loop' });
    expect(value(await client.cases.open({ id: 'loop' })).readme).toContain('# A loop');
    const missing = await client.cases.open({ id: 'nope' });
    expect(missing).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('rejects invalid input as data, naming the field', async () => {
    const { client, transport } = rig;
    const noId = await client.episode.step({} as never);
    expect(noId).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', message: expect.stringContaining('id') },
    });
    const extra = await client.episode.step({ id: 'x', bogus: 1 } as never);
    expect(extra).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const badKind = await client.episode.start({ task: { kind: 'nope' } } as never);
    expect(badKind).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const unknownOp = await transport.call('episode.teleport' as never, {});
    expect(unknownOp).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', message: expect.stringContaining('unknown operation') },
    });
  });

  it('a start carries pause switches: set before its first step, shown in the state it answers', async () => {
    const started = value(
      await rig.client.episode.start({
        task: { kind: 'sample', id: 'hello' },
        stop_points: { before_tool: true },
      }),
    );
    expect(started.stop_points).toEqual({ before_tool: true, before_answer: false });
    const plain = value(await rig.client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    expect(plain.stop_points).toEqual({ before_tool: false, before_answer: false });
    const bad = await rig.client.episode.start({
      task: { kind: 'sample', id: 'hello' },
      stop_points: { before_lunch: true },
    } as never);
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
  });

  it('stop points and changes of a held step cross as typed operations, refusals as data', async () => {
    const { client } = rig;
    const started = value(await client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    const id = started.branch;
    const points = value(await client.episode.setStopPoints({ id, stop_points: { before_tool: true } }));
    expect(points.stop_points).toEqual({ before_tool: true, before_answer: false });
    expect(points.held).toBeNull();
    const nothingHeld = await client.episode.editArguments({
      id,
      call_id: 'c1',
      arguments: { command: 'ls' },
    });
    expect(nothingHeld).toMatchObject({ ok: false, error: { code: 'conflict' } });
    const notAResult = await client.episode.replaceResult({
      id,
      call_id: 'c1',
      result: { ok: true } as never,
    });
    expect(notAResult).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const badPattern = await client.episode.setBreakpoints({
      id,
      breakpoints: [{ kind: 'request_match', pattern: '(' }],
    });
    expect(badPattern).toMatchObject({
      ok: false,
      error: { code: 'invalid_input', message: expect.stringContaining('is not a regular expression') },
    });
    value(await client.episode.stop({ id }));
  });

  it('carries errors with their codes', async () => {
    // A task named by a path outside the places the rule reads is refused, naming the field.
    const res = await rig.client.episode.start({
      task: { kind: 'path', path: '/tmp/missing.json' },
      agent: 'manual',
    });
    expect(res).toMatchObject({
      ok: false,
      error: {
        code: 'invalid_input',
        message: expect.stringMatching(/^task\.path: \/tmp\/missing\.json is outside/),
      },
    });
    const notLive = await rig.client.episode.step({ id: 'no-such-branch' });
    expect(notLive).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('starts a sample, steps it with live events, inspects, injects, rolls back, forks and stops', async () => {
    const { client, transport } = rig;
    const started = value(await client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    expect(started).toMatchObject({ step: 0, state: 'paused' });
    const id = started.branch;

    const seen = nextEvent(
      transport,
      'episode.event',
      (p) => p.branch === id && p.event.type === 'tool_result',
    );
    const stepped = value(await client.episode.step({ id }));
    expect(stepped).toMatchObject({ branch: id, step: 1, reason: { kind: 'step' } });
    const ev = await seen;
    expect(ev.event).toMatchObject({ type: 'tool_result', step: 1, result: { stdout: 'step 1\n' } });

    const view = value(await client.episode.open({ id }));
    expect(view.state).toMatchObject({ step: 1 });
    // Step 0 (setup) is a row too; the walkthroughs point at it.
    expect(view.rows.map((r) => r.step)).toEqual([0, 1]);
    expect(view.rows[0]).toMatchObject({ step: 0, status: 'setup', snapshot: true });
    expect(view.rows[1]).toMatchObject({
      step: 1,
      tools: ['execute_shell'],
      summary: 'echo step 1',
      status: 'ok',
      snapshot: true,
    });

    const detail = value(await client.episode.stepDetail({ id, step: 1 }));
    expect(detail.calls[0]).toMatchObject({ call: { name: 'execute_shell' }, result: { exit_code: 0 } });
    expect(detail.files[0]).toMatchObject({ path: 'out.txt', change: 'added', after: 'x' });
    // Several at once, in the order asked (the window's details fetched ahead): the same views,
    // a step not recorded left out.
    const ahead = value(await client.episode.stepDetails({ id, steps: [1, 99, 0] }));
    expect(ahead.details.map((d) => d.step)).toEqual([1, 0]);
    expect(ahead.details[0]).toEqual(detail);
    // The setup row counts the files step 0's Files tab lists: snapshot 0 changed none (the
    // fake's, like a project folder's, holds its files from the sandbox's start), its workspace
    // one; the row said "setup · 0 files" beside "Files (1)".
    expect(ahead.details[1].files.map((f) => f.path)).toEqual(['out.txt']);
    expect(view.rows[0].summary).toBe(`setup · ${ahead.details[1].files.length} file`);

    value(await client.episode.inject({ id, role: 'user', content: 'take an umbrella' }));
    const page = value(await client.episode.trace({ id, limit: 1000 }));
    expect(page.events.some((e) => e.type === 'injected' && e.content === 'take an umbrella')).toBe(true);
    const firstPage = value(await client.episode.trace({ id, limit: 2 }));
    expect(firstPage.events).toHaveLength(2);
    expect(firstPage.next).toBe(page.events[2].seq);

    value(await client.episode.step({ id }));
    const rolled = value(await client.episode.rollback({ id, step: 1 }));
    expect(rolled.step).toBe(1);
    const tooFar = await client.episode.rollback({ id, step: 9 });
    expect(tooFar).toMatchObject({ ok: false, error: { code: 'invalid_input' } });

    const changed = nextEvent(transport, 'library.changed');
    const fork = value(await client.episode.fork({ id, step: 1 }));
    expect(fork.branch).not.toBe(id);
    expect(fork.episode).toBe(started.episode);
    await changed;
    const forkView = value(await client.episode.open({ id: fork.branch }));
    expect(forkView.branches.map((b) => b.branch).sort()).toEqual([id, fork.branch].sort());
    expect(forkView.rows.map((r) => r.step)).toEqual([0, 1]);
    // The Replay panel's Agent field: read by the one rule (file-fields.ts), a relative path
    // from the recorded task's folder; outside the places it is refused before the disk is
    // touched, so a file that exists and one that does not get the same words.
    for (const op of ['fork', 'reopen'] as const) {
      const relative = await client.episode[op]({ id, step: 1, agent: 'scripted:../../etc/passwd' });
      expect(relative).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      expect(relative.ok ? '' : relative.error.message).toMatch(
        /^Agent: scripted:\.\.\/\.\.\/etc\/passwd resolves to \S+, which is outside the folders stepbox reads files from/,
      );
      const said = async (file: string) => {
        const res = await client.episode[op]({
          id,
          step: 1,
          agent: 'exec:node a.js',
          agent_options: { model: `scripted:${file}` },
        });
        expect(res).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
        return (res.ok ? '' : res.error.message).replace(file, 'FILE');
      };
      const exists = await said('/etc/passwd');
      expect(exists).toMatch(/^Its model calls answered by: scripted:FILE is outside the folders/);
      expect(await said('/no/such/answers.jsonl')).toBe(exists);
    }

    const cmp = value(await client.episode.compare({ a: id, b: fork.branch }));
    // The parent's agent was shown an injection after step 1 that the fork (cut at snapshot 1)
    // never saw: what the agent saw counts, so the pair differs at step 1 though the call is the same.
    expect(cmp.rows[0]).toMatchObject({
      step: 1,
      a_step: 1,
      b_step: 1,
      verdict: 'different_result',
      same_action: true,
      same_result: false,
      a: { injected: true },
      b: { injected: false },
    });

    const whatIf = value(
      await client.episode.whatIf({
        id,
        step: 1,
        call: { name: 'execute_shell', arguments: { command: 'ls' } },
      }),
    );
    expect(whatIf.result.stdout).toBe('what-if ls\n');

    const manual = await client.episode.decide({ id, call: { name: 'list_dir', arguments: { path: '.' } } });
    expect(manual).toMatchObject({
      ok: false,
      error: { code: 'conflict', message: expect.stringContaining('manual') },
    });

    const stopped = value(await client.episode.stop({ id }));
    expect(stopped).toEqual({ status: 'interrupted', end_reason: 'stopped' });
    expect(await client.episode.step({ id })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    value(await client.episode.stop({ id: fork.branch }));
  });

  it('runs to a breakpoint and reports it by state event', async () => {
    const { client, transport } = rig;
    const { branch } = value(
      await client.episode.start({
        task: { kind: 'sample', id: 'hello' },
        breakpoints: [{ kind: 'step', step: 2 }],
      }),
    );
    const paused = nextEvent(
      transport,
      'episode.state',
      (s) => s.branch === branch && s.reason?.kind === 'breakpoint',
    );
    const ran = value(await client.episode.run({ id: branch, wait: true }));
    expect(ran).toMatchObject({
      step: 1,
      reason: { kind: 'breakpoint', breakpoint: { kind: 'step', step: 2 } },
    });
    expect((await paused).step).toBe(1);
    value(await client.episode.stop({ id: branch }));
  });

  it('answers a stop after the end with the recorded end (the ended episode was already released)', async () => {
    const { client } = rig;
    const { branch } = value(await client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    const ran = value(await client.episode.run({ id: branch, wait: true }));
    expect(ran.reason?.kind).toBe('ended');
    expect(value(await client.episode.stop({ id: branch }))).toEqual({
      status: 'succeeded',
      end_reason: 'final_answer',
    });
    const unknown = await client.episode.stop({ id: 'ep-nope' });
    expect(unknown.ok ? null : unknown.error.code).toBe('not_found');
  });

  it('streams a terminal and stats to the caller, and sandbox info', async () => {
    const { client, transport } = rig;
    const { branch } = value(await client.episode.start({ task: { kind: 'sample', id: 'hello' } }));
    const info = value(await client.sandbox.info({ id: branch }));
    expect(info.docker.ok).toBe(true);
    expect(info.sandbox).toMatchObject({
      id: `fake-${branch}`,
      image: 'stepbox-sandbox:1',
      state: 'running',
    });
    expect(value(await client.sandbox.info({})).sandbox).toBeNull();
    expect(value(await client.sandbox.info({ id: 'recorded-only' })).sandbox).toBeNull();

    const { terminal } = value(await client.terminal.open({ id: branch, cols: 80, rows: 24 }));
    const data = nextEvent(
      transport,
      'terminal.data',
      (p) => p.terminal === terminal && p.data.includes('tty'),
    );
    value(await client.terminal.input({ terminal, data: 'tty\r' }));
    expect((await data).data).toBe('tty\r');
    value(await client.terminal.resize({ terminal, cols: 100, rows: 30 }));
    value(await client.terminal.ack({ terminal, bytes: 4 }));
    const exit = nextEvent(transport, 'terminal.exit', (p) => p.terminal === terminal);
    value(await client.terminal.close({ terminal }));
    expect((await exit).code).toBe(0);
    expect(await client.terminal.input({ terminal, data: 'x' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });

    const { subscription } = value(await client.stats.subscribe({ id: branch }));
    const sample = await nextEvent(transport, 'sandbox.stats', (s) => s.subscription === subscription);
    expect(sample).toMatchObject({ branch, cpu_percent: 1.5, memory_bytes: 1024 });
    // Against the limit the sandbox has, the one its limits line shows, not the cgroup's.
    expect(sample.memory_limit_bytes).toBe(info.sandbox?.limits.memory_bytes);
    value(await client.stats.unsubscribe({ subscription }));
    value(await client.episode.stop({ id: branch }));
  });

  it('answers doctor, search and replay', async () => {
    const { client } = rig;
    expect(value(await client.system.doctor()).ok).toBe(true);
    expect(value(await client.library.search({ query: 'tool:execute_shell' })).hits[0].snippet).toContain(
      'tool:execute_shell',
    );
    expect(value(await client.episode.replayVerify({ id: 'x' })).identical).toBe(true);
  });
});
