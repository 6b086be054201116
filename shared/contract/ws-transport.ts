import { appError } from '../app-error.js';
import { err, type Result } from '../result.js';
import { isEventName } from './event-names.js';
import type { EventName, Events } from './events.js';
import type { Transport } from './transport.js';
import type { CallFrame } from './ws-call-frame.js';
import { parseServerFrame, type ServerFrame } from './ws-protocol.js';

/** The part of a WebSocket this transport uses: the browser's and the `ws` package's both fit. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  addEventListener(type: 'open' | 'close' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}

/** How to open a socket (e.g. `(url) => new WebSocket(url)`). */
export type WebSocketFactory = (url: string) => WebSocketLike;

/** A WebSocket transport that can also be closed. */
export interface WebSocketTransport extends Transport {
  /** Closes the socket; pending calls resolve with an error. */
  close(): void;
  /**
   * Settles once the socket is open (connecting if it is not), after the calls already
   * made were sent; rejects when it cannot connect. The window waits on it before loading
   * its heavy code, which would otherwise hold the socket's open event and so its first call.
   */
  connected(): Promise<void>;
}

const OPEN = 1;

/** Options of {@link createWebSocketTransport}. */
export interface WebSocketTransportOptions {
  /** Told about every frame dropped as malformed (default: ignored). */
  readonly onProtocolError?: (message: string) => void;
}

/**
 * The contract over web mode's WebSocket. Connects on first use and again after a drop;
 * a call in flight when the socket closes resolves with `{ok: false}` (never hangs).
 * Every frame is checked (ws-protocol.ts), and every event payload against its stream's zod
 * schema; a malformed frame is dropped and reported to `onProtocolError`. The payload schemas
 * load with the first event (the window's first render builds no zod schema, issue 19.10);
 * frames arriving meanwhile wait behind it, so every frame is still handled in order.
 */
export function createWebSocketTransport(
  url: string,
  open: WebSocketFactory,
  options: WebSocketTransportOptions = {},
): WebSocketTransport {
  const protocolError = options.onProtocolError ?? (() => undefined);
  const listeners = new Map<EventName, Set<(payload: unknown) => void>>();
  const pending = new Map<number, (result: Result<unknown>) => void>();
  let socket: WebSocketLike | null = null;
  let ready: Promise<WebSocketLike> | null = null;
  let nextId = 1;

  const failAll = (message: string) => {
    for (const resolve of pending.values()) resolve(err(appError('internal', message)));
    pending.clear();
  };

  // The event payload schemas, once loaded; frames held (in order) while they load.
  let payloads: Events | null = null;
  let loading: Promise<void> | null = null;
  const held: ServerFrame[] = [];

  const deliver = (frame: ServerFrame) => {
    if (frame.kind === 'result') {
      const resolve = pending.get(frame.id);
      pending.delete(frame.id);
      resolve?.(frame.result);
      return;
    }
    const { event } = frame;
    if (!isEventName(event)) return protocolError(`unknown event stream "${event}"`);
    const set = listeners.get(event);
    if (!set || set.size === 0) return;
    if (!payloads) return protocolError(`${event}: its payload schema could not load`);
    const payload = payloads[event].safeParse(frame.payload);
    if (!payload.success) return protocolError(`${event}: ${payload.error.message}`);
    for (const listener of [...set]) listener(payload.data);
  };

  const loadPayloads = () => {
    loading ??= import('./events.js')
      .then(
        (m) => {
          payloads = m.EVENTS;
        },
        (e: unknown) =>
          protocolError(`the event schemas did not load: ${e instanceof Error ? e.message : String(e)}`),
      )
      .then(() => {
        for (const frame of held.splice(0)) deliver(frame);
      });
  };

  const onMessage = (data: unknown) => {
    if (typeof data !== 'string') return;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch (e) {
      return protocolError(`a frame is not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    const frame = parseServerFrame(json);
    if (!frame.ok) return protocolError(`not a result or event frame: ${frame.message}`);
    if (held.length > 0 || (frame.frame.kind === 'event' && loading === null)) {
      held.push(frame.frame);
      loadPayloads();
      return;
    }
    deliver(frame.frame);
  };

  const connect = (): Promise<WebSocketLike> => {
    if (ready && socket && socket.readyState <= OPEN) return ready;
    ready = new Promise<WebSocketLike>((resolve, reject) => {
      const s = open(url);
      socket = s;
      let opened = false;
      s.addEventListener('open', () => {
        opened = true;
        resolve(s);
      });
      s.addEventListener('message', (event) => onMessage(event.data));
      s.addEventListener('error', () => {
        if (!opened) reject(new Error(`cannot connect to ${url.replace(/token=[^&]*/, 'token=…')}`));
      });
      s.addEventListener('close', () => {
        if (!opened) reject(new Error('the server closed the connection (is the token right?)'));
        if (socket === s) {
          socket = null;
          ready = null;
        }
        failAll('the connection to stepbox closed');
      });
    });
    return ready;
  };

  return {
    async call(op, input) {
      const s = await connect();
      const id = nextId++;
      const frame: CallFrame = { kind: 'call', id, op, input: input ?? {} };
      return new Promise<Result<unknown>>((resolve) => {
        pending.set(id, resolve);
        s.send(JSON.stringify(frame));
      });
    },
    subscribe(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      // Events flow only over an open socket: subscribing connects.
      connect().catch(() => undefined);
      return () => set.delete(listener);
    },
    close() {
      socket?.close();
      failAll('the transport was closed');
    },
    async connected() {
      await connect();
    },
  };
}
