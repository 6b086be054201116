import { describe, expect, it } from 'vitest';
import {
  createClient,
  createMemoryTransport,
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
