import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { checkLoopback } from '../loopback-gate.js';

/** A request body over its bound: answered 413, never buffered further. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLarge';
  }
}

/** Reads a request body up to `limit` bytes; past it the request is dropped (the agent is untrusted). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      reject(new BodyTooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new BodyTooLarge(limit));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * True when the request carries the token as `Authorization: Bearer TOKEN`, as
 * `x-api-key: TOKEN` (how Anthropic clients send their key) or as `x-goog-api-key: TOKEN`
 * or `?key=TOKEN` (how Gemini clients do), compared in constant time.
 */
export function hasToken(req: IncomingMessage, token: string): boolean {
  const want = Buffer.from(token);
  const same = (value: string) => {
    const given = Buffer.from(value);
    return given.length === want.length && timingSafeEqual(given, want);
  };
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  if (m) return same(m[1]);
  for (const header of ['x-api-key', 'x-goog-api-key']) {
    const key = req.headers[header];
    if (typeof key === 'string' && key !== '') return same(key);
  }
  const query = (req.url ?? '').split('?')[1];
  const key = query === undefined ? null : new URLSearchParams(query).get('key');
  return key !== null && key !== '' && same(key);
}

/** Sends a JSON body. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** An OpenAI-shaped error body (what the SDKs parse and show). */
export function apiError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { message, type: code, code, param: null } });
}

/** A handler's failure: 413 for a body over its bound, else 500 (the cause is logged, not sent). */
function answerFailure(e: unknown, res: ServerResponse, log: { error(message: string): void }): void {
  if (e instanceof BodyTooLarge) {
    apiError(res, 413, 'request_too_large', e.message);
    return;
  }
  log.error(`request failed: ${e instanceof Error ? e.message : String(e)}`);
  if (!res.headersSent) apiError(res, 500, 'internal', 'stepbox could not answer this request');
}

/** A server bound to 127.0.0.1 on a free port, every request checked for the host and the token first. */
export interface LocalServer {
  readonly port: number;
  readonly server: Server;
  /** Also answers requests whose Host names loopback `port` (a relay's port that reaches this server). */
  answerAs(port: number): void;
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 (never another interface) whose handler only sees
 * requests to this host carrying the token; others get 401 (or 403 for a foreign Host or Origin).
 */
export async function listenLocal(
  token: string,
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  log: { error(message: string): void },
): Promise<LocalServer> {
  let port = 0;
  const aliases: number[] = [];
  const server = createServer((req, res) => {
    const loopback = checkLoopback(req, [port, ...aliases]);
    if (!loopback.ok) {
      apiError(res, 403, 'forbidden_origin', loopback.message);
      return;
    }
    if (!hasToken(req, token)) {
      res.setHeader('www-authenticate', 'Bearer');
      apiError(
        res,
        401,
        'unauthorized',
        'send Authorization: Bearer $STEPBOX_TOKEN, x-api-key or x-goog-api-key: $STEPBOX_TOKEN (the episode token)',
      );
      return;
    }
    handler(req, res).catch((e: unknown) => answerFailure(e, res, log));
  });
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    server,
    answerAs: (p) => {
      if (!aliases.includes(p)) aliases.push(p);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
