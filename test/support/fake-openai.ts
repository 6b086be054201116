import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted reply of the fake server: an assistant message, an HTTP error, or never an answer (`hang`). */
export type FakeReply =
  | { readonly message: { content: string | null; tool_calls?: unknown[] }; readonly logprobs?: boolean }
  | { readonly status: number; readonly error: { message: string; type?: string; code?: string } }
  | { readonly hang: true };

/** A request the fake server received. */
export interface FakeRequest {
  readonly body: Record<string, unknown>;
  readonly authorization: string | undefined;
}

/**
 * A chat-completions server on 127.0.0.1 speaking the OpenAI wire format (tool_calls,
 * usage, logprobs). Replies come from a queue; `onRequest` may compute one from the
 * request (e.g. to check what the agent was sent).
 */
export class FakeOpenAi {
  readonly requests: FakeRequest[] = [];
  private readonly queue: FakeReply[] = [];
  private server: Server | null = null;
  /** Requests left hanging whose client gave up (closed the connection). */
  abandoned = 0;
  onRequest: ((req: FakeRequest) => FakeReply | undefined) | null = null;

  /** Queues replies, served in order. */
  reply(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  /** Starts listening; resolves with the base URL (`http://127.0.0.1:PORT/v1`). */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void readBody(req).then((text) => {
        const body = JSON.parse(text || '{}') as Record<string, unknown>;
        const request = { body, authorization: req.headers.authorization };
        this.requests.push(request);
        const reply = this.onRequest?.(request) ?? this.queue.shift();
        if (reply && 'hang' in reply) {
          // A hung endpoint: headers never sent; the client can only time out or abort.
          res.on('close', () => (this.abandoned += 1));
          return;
        }
        res.setHeader('content-type', 'application/json');
        if (!reply) {
          res.statusCode = 500;
          res.end(
            JSON.stringify({ error: { message: 'fake server: no reply queued', type: 'server_error' } }),
          );
          return;
        }
        if ('status' in reply) {
          res.statusCode = reply.status;
          res.end(JSON.stringify({ error: reply.error }));
          return;
        }
        res.end(JSON.stringify(completion(body, reply)));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function completion(body: Record<string, unknown>, reply: Extract<FakeReply, { message: unknown }>) {
  const text = reply.message.content ?? '';
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.message.content, tool_calls: reply.message.tool_calls },
        finish_reason: reply.message.tool_calls ? 'tool_calls' : 'stop',
        logprobs:
          body.logprobs && reply.logprobs !== false
            ? {
                content: [
                  {
                    token: text.slice(0, 4) || 'call',
                    logprob: -0.1,
                    bytes: null,
                    top_logprobs: [
                      { token: 'a', logprob: -0.1, bytes: null },
                      { token: 'b', logprob: -2.3, bytes: null },
                    ],
                  },
                ],
              }
            : null,
      },
    ],
    usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
  };
}

/** A tool call in the wire format. */
export function wireCall(id: string, name: string, args: Record<string, unknown>) {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}
