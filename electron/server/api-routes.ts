import type { IncomingMessage, ServerResponse } from 'node:http';
import { appError } from '../../shared/errors.js';
import { err } from '../../shared/result.js';
import type { AppServices } from '../services/app-services.js';

/** The largest request body `/api/*` accepts. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

const VERSION = '0.1.0';

/** Writes one JSON response. Exported for the server's own error answers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(JSON.stringify(body));
}

/** How much of an oversized body is read and thrown away so the 413 reaches the client (not a reset). */
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * The request body, or null when it is over {@link MAX_BODY_BYTES}. An oversized body is
 * not kept but read to its end (up to {@link MAX_DRAIN_BYTES} more), because closing a
 * socket with unread data makes the kernel answer with a reset instead of our 413.
 */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES + MAX_DRAIN_BYTES) {
      // Hopeless to drain: answer now; the reply goes out before the socket closes.
      req.pause();
      resolve(null);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES + MAX_DRAIN_BYTES) req.destroy();
      else if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The operation name of `/api/<op>`, or null when its %-escapes are malformed. */
function operationOf(pathname: string): string | null {
  try {
    return decodeURIComponent(pathname.slice('/api/'.length));
  } catch {
    return null;
  }
}

/**
 * `/api/*` (the token was already checked): `GET /api/health`, and `POST /api/<op>` with
 * the request as the JSON body, answering the operation's Result (200; errors are data).
 * Unknown operations are 404, a malformed %-escape in the name or a body that is not JSON
 * is 400, a body over {@link MAX_BODY_BYTES} is 413, other methods 405; every error has a
 * JSON body.
 */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  services: AppServices,
  headers: Record<string, string>,
  started: number,
): Promise<void> {
  const op = operationOf(pathname);
  if (op === null)
    return sendJson(
      res,
      400,
      err(appError('invalid_input', `the operation name in ${pathname} has a malformed %-escape`)),
      headers,
    );
  if (op === 'health') {
    if (req.method !== 'GET')
      return sendJson(res, 405, err(appError('usage', 'use GET /api/health')), headers);
    return sendJson(
      res,
      200,
      { ok: true, value: { version: VERSION, uptime_ms: Date.now() - started } },
      headers,
    );
  }
  if (req.method !== 'POST')
    return sendJson(res, 405, err(appError('usage', `use POST /api/${op} with a JSON body`)), headers);
  const body = await readBody(req);
  if (body === null)
    return sendJson(
      res,
      413,
      err(
        appError(
          'invalid_input',
          `the request body is over the ${MAX_BODY_BYTES}-byte limit of /api; send a smaller request`,
        ),
      ),
      { ...headers, Connection: 'close' },
    );
  let input: unknown = {};
  if (body.trim()) {
    try {
      input = JSON.parse(body);
    } catch (e) {
      return sendJson(
        res,
        400,
        err(appError('invalid_input', `body is not JSON: ${(e as Error).message}`)),
        headers,
      );
    }
  }
  const result = await services.handle(op, input, { client: 'http' });
  const unknownOp =
    !result.ok &&
    result.error.code === 'invalid_input' &&
    result.error.message.startsWith('unknown operation');
  sendJson(res, unknownOp ? 404 : 200, result, headers);
}
