import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../shared/trace-events.js';
import {
  applyEventToRows,
  stepRowsOf,
  type StepRow,
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

  it('folds events into one row per step, the same incrementally and in bulk, and drops rows after a rollback', () => {
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
    events.push(...stepEvents(6, 101));
    let live: readonly StepRow[] = [];
    for (const e of events) live = applyEventToRows(live, e);
    const bulk = stepRowsOf(events, [
      { rule: 'loop', step: 3, message: 'same call again', severity: 'warning' },
    ]);
    expect(bulk.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(live.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(bulk[0]).toMatchObject({ summary: 'echo 1', status: 'ok', duration_ms: 3, snapshot: true });
    expect(bulk[2].flags).toHaveLength(1);
    expect(live[2].flags).toHaveLength(0);
    expect(stepRowsOf(stepEvents(7, 1))[0].status).toBe('nonzero_exit');
  });

  it('builds 10,000 rows in linear time (a quadratic fold takes many seconds)', () => {
    const events: TraceEvent[] = [];
    for (let k = 1; k <= 10_000; k++) events.push(...stepEvents(k, events.length + 1));
    const started = performance.now();
    expect(stepRowsOf(events)).toHaveLength(10_000);
    expect(performance.now() - started).toBeLessThan(2000);
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
    expect(data).toEqual(['hi']);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain('terminal.data');

    const pending = transport.call('cases.list', {});
    await new Promise((r) => setTimeout(r, 0));
    transport.close();
    expect(await pending).toMatchObject({ ok: false, error: { code: 'internal' } });
  });
});
