import type { IncomingMessage, ServerResponse } from 'node:http';
import { appError } from '../../shared/errors.js';
import { err } from '../../shared/result.js';
import type { AppServices } from '../services/app-services.js';

/** The largest request body `/api/*` accepts. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

const VERSION = '0.1.0';

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * `/api/*` (the token was already checked): `GET /api/health`, and `POST /api/<op>` with
 * the request as the JSON body, answering the operation's Result (200; errors are data).
 * Unknown operations are 404, a body that is not JSON is 400, other methods 405.
 */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  services: AppServices,
  headers: Record<string, string>,
  started: number,
): Promise<void> {
  const op = decodeURIComponent(pathname.slice('/api/'.length));
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
      err(appError('invalid_input', `request body over ${MAX_BODY_BYTES} bytes`)),
      headers,
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
