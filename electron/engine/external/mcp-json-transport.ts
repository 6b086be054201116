import { randomUUID } from 'node:crypto';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** A request of one HTTP POST, waiting for the protocol server's response. */
interface Pending {
  readonly id: RequestId;
  readonly resolve: (message: JSONRPCMessage) => void;
  /** Where the server's notifications about this request go (an SSE answer); absent: dropped. */
  readonly notify?: (message: JSONRPCMessage) => void;
}

/**
 * The SDK `Transport` behind the episode's MCP endpoint in JSON-response mode: one
 * long-lived protocol server answers every POST, instead of a new server and transport
 * per request (the SDK's stateless recipe, whose per-request cost was most of the
 * overhead). Two clients may use the same JSON-RPC id at once, so each request gets an
 * id of this transport's own on the way in and its own back on the way out; responses
 * are routed by that id. The ids are unguessable strings, so a client's
 * `notifications/cancelled` (which names its own id) can never abort another client's
 * request; in this stateless mode a cancellation is ignored, as it is by the SDK's
 * per-request servers. Notifications the server sends while answering (progress,
 * logs) go to the request's `notify` when its POST is answered as an SSE stream, and
 * are dropped otherwise, as the SDK drops them in JSON-response mode; the server never
 * sends requests of its own (no sampling, no elicitation).
 */
export class McpJsonTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private readonly prefix = `stepbox-${randomUUID()}-`;
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  async start(): Promise<void> {}

  /**
   * Hands one POST's messages to the server; resolves with the responses to its
   * requests, in request order (empty when it held only notifications or responses).
   */
  dispatch(
    messages: readonly JSONRPCMessage[],
    extra: MessageExtraInfo,
    notify?: (message: JSONRPCMessage) => void,
  ): Promise<JSONRPCMessage[]> {
    const answers: Promise<JSONRPCMessage>[] = [];
    for (const message of messages) {
      if ('method' in message && 'id' in message) {
        const own = `${this.prefix}${this.next++}`;
        answers.push(
          new Promise<JSONRPCMessage>((resolve) =>
            this.pending.set(own, { id: message.id, resolve, notify }),
          ),
        );
        this.onmessage?.({ ...message, id: own }, extra);
      } else {
        this.onmessage?.(message, extra);
      }
    }
    return Promise.all(answers);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return;
    if ('method' in message) {
      // A notification about a request (progress, a log line) follows that request's answer stream.
      const related = options?.relatedRequestId;
      if (!('id' in message) && related !== undefined) this.pending.get(String(related))?.notify?.(message);
      return;
    }
    if (!('id' in message)) return;
    const own = String(message.id);
    const pending = this.pending.get(own);
    if (!pending) return;
    this.pending.delete(own);
    pending.resolve({ ...message, id: pending.id } as JSONRPCMessage);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A POST still waiting is answered rather than left hanging.
    for (const p of this.pending.values())
      p.resolve({ jsonrpc: '2.0', id: p.id, error: { code: -32000, message: 'the MCP server closed' } });
    this.pending.clear();
    this.onclose?.();
  }
}
