import { describe, expect, it, vi } from 'vitest';
import type { TraceEvent } from '../../shared/trace-events.js';
import {
  applyEventToRows,
  liveRowsOf,
  stepRowsOf,
  createClient,
  createMemoryTransport,
  createWebSocketTransport,
  type WebSocketLike,
  eventMethodName,
  EVENT_NAMES,
  OPERATION_NAMES,
  webSocketUrlFor,
  type ContractHandler,
  type EventName,
} from '../../shared/contract/index.js';
import { ok } from '../../shared/result.js';

function fakeHandler() {
  const calls: { op: string; input: unknown }[] = [];
  let emit: (event: EventName, payload: unknown) => void = () => undefined;
  const handler: ContractHandler = {
    async handle(op, input) {
      calls.push({ op, input });
      return ok({ echoed: op });
    },
    subscribe(listener) {
      emit = listener;
      return () => undefined;
    },
  };
  return { handler, calls, emit: (e: EventName, p: unknown) => emit(e, p) };
}

describe('contract client', () => {
  it('exposes every operation as domain.verb methods and every event as onX', () => {
    const client = createClient(createMemoryTransport(fakeHandler().handler)) as unknown as Record<
      string,
      Record<string, unknown>
    >;
    for (const op of OPERATION_NAMES) {
      const [domain, verb] = op.split('.');
      expect(typeof client[domain][verb], op).toBe('function');
    }
    for (const event of EVENT_NAMES) expect(typeof client[eventMethodName(event)], event).toBe('function');
    expect(eventMethodName('episode.event')).toBe('onEpisodeEvent');
    expect(eventMethodName('sandbox.statsEnd')).toBe('onSandboxStatsEnd');
  });

  it('routes calls by name with their request and delivers events until unsubscribed', async () => {
    const fake = fakeHandler();
    const client = createClient(createMemoryTransport(fake.handler));
    const res = await client.episode.step({ id: 'ep1' });
    expect(res).toEqual({ ok: true, value: { echoed: 'episode.step' } });
    await client.tasks.list();
    expect(fake.calls).toEqual([
      { op: 'episode.step', input: { id: 'ep1' } },
      { op: 'tasks.list', input: {} },
    ]);
    const seen: string[] = [];
    const off = client.onTerminalData((p) => seen.push(p.data));
    fake.emit('terminal.data', { terminal: 't', data: 'a' });
    off();
    fake.emit('terminal.data', { terminal: 't', data: 'b' });
    expect(seen).toEqual(['a']);
  });

  it('turns a failing transport into an error value', async () => {
    const client = createClient({
      call: () => Promise.reject(new Error('socket gone')),
      subscribe: () => () => undefined,
    });
    const res = await client.library.list({});
    expect(res.ok).toBe(false);
    if (!res.ok)
      expect(res.error).toMatchObject({ code: 'internal', message: expect.stringContaining('socket gone') });
  });

  it('derives the WebSocket URL from the page URL with its token', () => {
    expect(webSocketUrlFor('http://127.0.0.1:4123/?token=abc')).toBe('ws://127.0.0.1:4123/ws?token=abc');
    expect(webSocketUrlFor('http://127.0.0.1:4123/index.html?x=1&token=t2#h')).toBe(
      'ws://127.0.0.1:4123/ws?token=t2',
    );
  });
});

describe('step rows', () => {
  const base = { t: 0, source: 'agent' as const };
  const stepEvents = (k: number, seq: number): TraceEvent[] => [
    {
      ...base,
      seq,
      step: k,
      type: 'action',
      calls: [{ id: `c${k}`, name: 'execute_shell', arguments: { command: `echo ${k}` } }],
      final: null,
    },
    {
      ...base,
      seq: seq + 1,
      step: k,
      type: 'tool_result',
      source: 'environment',
      call_id: `c${k}`,
      name: 'execute_shell',
      result: { ok: true, exit_code: k % 7 === 0 ? 1 : 0, duration_ms: 3, bytes: 2 },
    },
    {
      ...base,
      seq: seq + 2,
      step: k,
      type: 'snapshot',
      source: 'harness',
      tree_hash: 'h',
      manifest: 'm',
      changed: [],
      bytes: 0,
    },
  ];

  const foldLive = (events: readonly TraceEvent[]) => {
    let live = liveRowsOf([]);
    for (const e of events) live = applyEventToRows(live, e);
    return live;
  };

  it('folds events into one row per step, the same incrementally and in bulk, and keeps a branch closed by a rollback whole', () => {
    const events: TraceEvent[] = [];
    for (let k = 1; k <= 8; k++) events.push(...stepEvents(k, events.length + 1));
    events.push({
      ...base,
      seq: 100,
      step: 8,
      type: 'rollback',
      source: 'human',
      to_step: 5,
      reason: 'user',
    });
    const live = foldLive(events).rows;
    const bulk = stepRowsOf(events, [
      { rule: 'loop', step: 3, message: 'same call again', severity: 'warning' },
    ]);
    expect(bulk.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(live).toEqual(stepRowsOf(events));
    expect(bulk[0]).toMatchObject({ summary: 'echo 1', status: 'ok', duration_ms: 3, snapshot: true });
    // A person's rollback after step 8 finished: not a restore inside it (mid-step).
    expect(bulk[7]).toMatchObject({ rollbacks: 0, rolled_back_to: 5 });
    expect(bulk[2].flags).toHaveLength(1);
    expect(live[2].flags).toHaveLength(0);
    expect(stepRowsOf(stepEvents(7, 1))[0].status).toBe('nonzero_exit');
  });

  it('keeps step 0, an incomplete last step, and a step with a rollback inside it (hard timeout)', () => {
    const timeout = {
      ok: false,
      error: { code: 'timeout' as const, message: 'killed' },
      exit_code: 137,
      duration_ms: 5000,
      bytes: 0,
    };
    const fallback = { ok: true, stdout: 'cached', duration_ms: 0, bytes: 6, fallback: true };
    const events: TraceEvent[] = [
      {
        ...base,
        seq: 1,
        step: 0,
        type: 'snapshot',
        source: 'harness',
        tree_hash: 'h0',
        manifest: 'm0',
        changed: [],
        bytes: 0,
      },
      { ...base, seq: 2, step: 0, type: 'human_command', source: 'human', command: 'touch leak' },
      ...stepEvents(1, 3),
      {
        ...base,
        seq: 10,
        step: 2,
        type: 'action',
        calls: [{ id: 'c2', name: 'execute_shell', arguments: { command: 'sleep 99' } }],
        final: null,
      },
      {
        ...base,
        seq: 11,
        step: 2,
        type: 'tool_call',
        call_id: 'c2',
        name: 'execute_shell',
        arguments: { command: 'sleep 99' },
      },
      {
        ...base,
        seq: 12,
        step: 2,
        type: 'tool_result',
        source: 'environment',
        call_id: 'c2',
        name: 'execute_shell',
        result: fallback,
        real: timeout,
      },
      { ...base, seq: 13, step: 2, type: 'rollback', source: 'harness', to_step: 1, reason: 'hard_timeout' },
      {
        ...base,
        seq: 14,
        step: 2,
        type: 'snapshot',
        source: 'harness',
        tree_hash: 'h',
        manifest: 'm',
        changed: [],
        bytes: 0,
      },
      {
        ...base,
        seq: 15,
        step: 3,
        type: 'action',
        calls: [{ id: 'c3', name: 'execute_shell', arguments: { command: 'kill 1' } }],
        final: null,
      },
      {
        ...base,
        seq: 16,
        step: 3,
        type: 'tool_result',
        source: 'environment',
        call_id: 'c3',
        name: 'execute_shell',
        result: {
          ok: false,
          error: { code: 'sandbox_lost' as const, message: 'gone' },
          duration_ms: 1,
          bytes: 0,
        },
      },
      {
        ...base,
        seq: 17,
        step: 3,
        type: 'error',
        source: 'harness',
        code: 'sandbox_lost',
        message: 'the container died',
        fatal: true,
      },
    ];
    const rows = stepRowsOf(events);
    expect(rows.map((r) => r.step)).toEqual([0, 1, 2, 3]);
    expect(rows[0]).toMatchObject({ status: 'setup', human: true, snapshot: true });
    expect(rows[2]).toMatchObject({
      tools: ['execute_shell'],
      summary: 'sleep 99',
      status: 'ok',
      rollbacks: 1,
    });
    expect(rows[2].real).toBe('execute_shell: error timeout, exit 137 (agent saw ok)');
    expect(rows[3]).toMatchObject({
      status: 'tool_error',
      snapshot: false,
      error: 'sandbox_lost: the container died',
    });
    expect(foldLive(events).rows).toEqual(rows);
  });

  it('marks live rows stale when an event touches a step the view loaded (its earlier events are not in the fold)', () => {
    const loaded = stepRowsOf(stepEvents(1, 1));
    let live = liveRowsOf(loaded);
    live = applyEventToRows(live, {
      ...base,
      seq: 9,
      step: 1,
      type: 'injected',
      source: 'injected',
      role: 'user',
      content: 'hi',
    });
    expect(live.stale).toBe(true);
    expect(live.rows).toBe(loaded);
    live = applyEventToRows(liveRowsOf(loaded), stepEvents(2, 20)[0]);
    expect(live.stale).toBe(false);
    expect(live.rows.map((r) => r.step)).toEqual([1, 2]);
  });

  it('builds 10,000 rows, one per step in order (its speed is the bench ui section, not a timed assertion)', () => {
    const events: TraceEvent[] = [];
    for (let k = 1; k <= 10_000; k++) events.push(...stepEvents(k, events.length + 1));
    const rows = stepRowsOf(events);
    expect(rows).toHaveLength(10_000);
    expect(rows.every((r, i) => r.step === i + 1 && r.snapshot)).toBe(true);
  });
});

describe('WebSocket transport', () => {
  /** A socket the test drives: opens at once, records what is sent, delivers what the test pushes. */
  function fakeSocket() {
    const handlers: Record<string, ((e: { data: unknown }) => void)[]> = {};
    const sent: string[] = [];
    const socket: WebSocketLike = {
      readyState: 1,
      send: (d) => sent.push(d),
      close: () => handlers.close?.forEach((h) => h({ data: null })),
      addEventListener: (type: string, h: (e: { data: unknown }) => void) => {
        (handlers[type] ??= []).push(h);
        if (type === 'open') queueMicrotask(() => h({ data: null }));
      },
    } as WebSocketLike;
    const push = (frame: unknown) => handlers.message?.forEach((h) => h({ data: JSON.stringify(frame) }));
    return { socket, sent, push };
  }

  it('pairs results with calls, validates event payloads, and fails pending calls on close', async () => {
    const fake = fakeSocket();
    const errors: string[] = [];
    const transport = createWebSocketTransport('ws://x/ws?token=t', () => fake.socket, {
      onProtocolError: (m) => errors.push(m),
    });
    const data: string[] = [];
    transport.subscribe('terminal.data', (p) => data.push((p as { data: string }).data));
    const call = transport.call('tasks.list', {});
    await new Promise((r) => setTimeout(r, 0));
    const frame = JSON.parse(fake.sent[0]) as { id: number; op: string };
    expect(frame).toMatchObject({ kind: 'call', op: 'tasks.list', input: {} });
    fake.push({ kind: 'result', id: frame.id, result: { ok: true, value: { tasks: [] } } });
    expect(await call).toEqual({ ok: true, value: { tasks: [] } });

    fake.push({ kind: 'event', event: 'terminal.data', payload: { terminal: 't1', data: 'hi' } });
    fake.push({ kind: 'event', event: 'terminal.data', payload: { terminal: 't1' } });
    fake.push({ kind: 'event', event: 'no.such', payload: {} });
    // The payload schemas load with the first event (the window's first render builds none).
    await vi.waitFor(() => expect(errors).toHaveLength(2));
    expect(data).toEqual(['hi']);
    expect(errors[0]).toContain('terminal.data');

    const pending = transport.call('cases.list', {});
    await new Promise((r) => setTimeout(r, 0));
    transport.close();
    expect(await pending).toMatchObject({ ok: false, error: { code: 'internal' } });
  });

  it('keeps the order of frames while the event schemas load: a result after an event resolves after it', async () => {
    const fake = fakeSocket();
    const transport = createWebSocketTransport('ws://x/ws?token=t', () => fake.socket);
    const seen: string[] = [];
    transport.subscribe('terminal.data', (p) => seen.push(`event ${(p as { data: string }).data}`));
    const call = transport.call('tasks.list', {});
    await vi.waitFor(() => expect(fake.sent).toHaveLength(1));
    const { id } = JSON.parse(fake.sent[0]) as { id: number };
    fake.push({ kind: 'event', event: 'terminal.data', payload: { terminal: 't1', data: 'first' } });
    fake.push({ kind: 'result', id, result: { ok: true, value: 'second' } });
    void call.then((r) => seen.push(`result ${(r as { value: string }).value}`));
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen).toEqual(['event first', 'result second']);
  });

  it('drops a malformed result frame (an unknown error code, an extra key, a bad id) and says why', async () => {
    const fake = fakeSocket();
    const errors: string[] = [];
    const transport = createWebSocketTransport('ws://x/ws?token=t', () => fake.socket, {
      onProtocolError: (m) => errors.push(m),
    });
    const call = transport.call('tasks.list', {});
    await vi.waitFor(() => expect(fake.sent).toHaveLength(1));
    const { id } = JSON.parse(fake.sent[0]) as { id: number };
    fake.push({ kind: 'result', id, result: { ok: false, error: { code: 'no_such_code', message: 'x' } } });
    fake.push({ kind: 'result', id, result: { ok: true, value: 1 }, extra: true });
    fake.push({ kind: 'result', id: -1, result: { ok: true, value: 1 } });
    fake.push({ kind: 'result', id: 1.5, result: { ok: true, value: 1 } });
    fake.push({ kind: 'result', id, result: { ok: 'yes' } });
    expect(errors).toHaveLength(5);
    expect(errors[0]).toContain('known code');
    expect(errors[1]).toContain('"extra"');
    fake.push({
      kind: 'result',
      id,
      result: { ok: false, error: { code: 'not_found', message: 'gone', more: 1 } },
    });
    expect(await call).toEqual({ ok: false, error: { code: 'not_found', message: 'gone' } });
  });

  it('connected() settles once the socket is open, after the calls already made were sent (the window loads its code then)', async () => {
    const fake = fakeSocket();
    const transport = createWebSocketTransport('ws://x/ws?token=t', () => fake.socket);
    void transport.call('episode.open', { id: 'b' });
    expect(fake.sent).toHaveLength(0);
    await transport.connected();
    expect(fake.sent.map((f) => (JSON.parse(f) as { op: string }).op)).toEqual(['episode.open']);
  });

  it('connected() rejects when the socket cannot open', async () => {
    const handlers: Record<string, (() => void)[]> = {};
    const socket = {
      readyState: 0,
      send: () => undefined,
      close: () => undefined,
      addEventListener: (type: string, h: () => void) => {
        (handlers[type] ??= []).push(h);
        if (type === 'close') queueMicrotask(() => handlers.close?.forEach((c) => c()));
      },
    } as unknown as WebSocketLike;
    const transport = createWebSocketTransport('ws://x/ws?token=t', () => socket);
    await expect(transport.connected()).rejects.toThrow(/closed the connection/);
  });
});
