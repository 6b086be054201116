import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { CallFrame, type EventFrame, type ResultFrame } from '../../shared/contract/index.js';
import { appError } from '../../shared/errors.js';
import { logger } from '../engine/log.js';
import type { AppServices } from '../services/app-services.js';

const log = logger('ws');

/** The largest frame a window may send (a pasted file in the injection panel fits). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** A window that stops reading and holds this much unsent is disconnected rather than grown without bound. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/**
 * The contract over WebSocket: call frames in, result and event frames out, each a
 * zod-validated JSON object. Each connection is a client: the terminals and stats streams
 * it opens are its own (their events go only to it) and close with it.
 */
export class WsGateway {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private nextClient = 1;

  constructor(private readonly services: AppServices) {}

  /** Takes over an upgrade request the HTTP server already authorized. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.connected(ws));
  }

  /** Closes every connection. */
  close(): Promise<void> {
    for (const ws of this.wss.clients) ws.close(1001, 'server closing');
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }

  private connected(ws: WebSocket): void {
    const client = `ws-${this.nextClient++}`;
    // A window: while none is connected (after a grace), its live sandboxes are released.
    this.services.openClient(client);
    const send = (frame: ResultFrame | EventFrame) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        log.warn(`${client} is not reading (${ws.bufferedAmount} bytes queued); disconnecting it`);
        ws.terminate();
        return;
      }
      ws.send(JSON.stringify(frame));
    };
    const off = this.services.subscribeAudience((event, payload, audience) => {
      if (audience === null || audience === client) send({ kind: 'event', event, payload });
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return send(badFrame(null, 'binary frames are not part of the contract'));
      let json: unknown;
      try {
        json = JSON.parse(data.toString());
      } catch (e) {
        return send(badFrame(null, `frame is not JSON: ${(e as Error).message}`));
      }
      const frame = CallFrame.safeParse(json);
      if (!frame.success) {
        const id = (json as { id?: unknown })?.id;
        return send(
          badFrame(
            typeof id === 'number' && id >= 0 ? id : null,
            'not a call frame {kind:"call", id, op, input}',
          ),
        );
      }
      const { id, op, input } = frame.data;
      void this.services.handle(op, input, { client }).then((result) => send({ kind: 'result', id, result }));
    });
    ws.on('close', () => {
      off();
      this.services
        .closeClient(client)
        .catch((e: unknown) => log.warn(`closing ${client}'s streams: ${String(e)}`));
    });
    ws.on('error', (e) => log.warn(`${client}: ${e.message}`));
  }
}

/** A frame that cannot be answered normally: a result with id 0 when it had none. */
function badFrame(id: number | null, message: string): ResultFrame {
  return { kind: 'result', id: id ?? 0, result: { ok: false, error: appError('invalid_input', message) } };
}
