// Web mode answers bad input with a JSON error and the right status, on every route:
// malformed %-escapes and request targets are 400, bodies over the limit 413 (read to
// their end, so the client sees the answer and not a reset), a failing handler 500 —
// never an empty body or a crashed server.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../electron/server/api-routes.js';
import { listen, type WebServer } from '../../electron/server/web-server.js';
import type { AppServices } from '../../electron/services/app-services.js';

interface Reply {
  status: number;
  body: string;
}

/** Sends one request with any target (no URL parsing on the way) and reads the whole reply. */
function send(port: number, method: string, path: string, token: string, body = ''): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, agent: false, headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function post(port: number, path: string, body: Buffer, chunked: boolean, token: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': body.length }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    if (chunked) {
      // Several chunks, so the limit is crossed mid-stream.
      const step = 1024 * 1024;
      for (let i = 0; i < body.length; i += step) req.write(body.subarray(i, i + step));
      req.end();
    } else req.end(body);
  });
}

function jsonError(body: string): { code: string; message: string } {
  const parsed = JSON.parse(body) as { ok: boolean; error: { code: string; message: string } };
  expect(parsed.ok).toBe(false);
  expect(parsed.error.message.length).toBeGreaterThan(10);
  return parsed.error;
}

describe('web mode on bad input', () => {
  let server: WebServer;
  let dir: string;
  const services = {
    handle: async (op: string) => {
      if (op === 'explode') throw new Error('boom in a handler');
      return { ok: true, value: op };
    },
    subscribeAudience: () => () => undefined,
    openClient: () => undefined,
    closeClient: async () => undefined,
  } as unknown as AppServices;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-serve-bad-'));
    server = await listen({ services, rendererDir: dir });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a malformed %-escape in an operation name or a file path with 400 and a JSON error', async () => {
    for (const target of ['/api/%', '/api/episode.%zz', '/api/%E0%A4%A', '/api/%ff', '/assets/%zz.js']) {
      const method = target.startsWith('/api/') ? 'POST' : 'GET';
      const reply = await send(server.port, method, target, server.token, '{}');
      expect(reply.status, target).toBe(400);
      const error = jsonError(reply.body);
      expect(error.code).toBe('invalid_input');
      expect(error.message).toContain('%-escape');
    }
  });

  it('answers a request target that is not a URL path with 400 on every route, and keeps serving', async () => {
    for (const target of ['//[', '//[::1/api/health', 'http://[::1']) {
      for (const method of ['GET', 'POST']) {
        const reply = await send(server.port, method, target, server.token);
        expect(reply.status, `${method} ${target}`).toBe(400);
        expect(jsonError(reply.body).code).toBe('invalid_input');
      }
    }
    expect((await send(server.port, 'GET', '/api/health', server.token)).status).toBe(200);
  });

  it('answers a body over the limit with 413 and a JSON error naming the limit, with or without a length', async () => {
    const big = Buffer.alloc(MAX_BODY_BYTES + 1024 * 1024, 0x20);
    for (const chunked of [false, true]) {
      const reply = await post(server.port, '/api/episode.list', big, chunked, server.token);
      expect(reply.status, chunked ? 'chunked' : 'with length').toBe(413);
      expect(jsonError(reply.body).message).toContain(String(MAX_BODY_BYTES));
    }
    // Exactly at the limit is still served.
    const fits = Buffer.alloc(MAX_BODY_BYTES, 0x20);
    fits.write('{}');
    expect((await post(server.port, '/api/episode.list', fits, false, server.token)).status).toBe(200);
  });

  it('answers a handler that throws with 500 and a JSON error, not an empty body', async () => {
    const reply = await post(server.port, '/api/explode', Buffer.from('{}'), false, server.token);
    expect(reply.status).toBe(500);
    expect(jsonError(reply.body).message).toContain('boom in a handler');
  });
});
