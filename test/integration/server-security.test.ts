// Web mode's gate, against a real `stepbox serve --port 0` child process: first stdout
// line is the URL with the token; 401 without it on /api/* and the WebSocket; 403 on a
// foreign Origin or Host; a strict CSP on the page.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnServe, type ServeChild } from '../support/web-server.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function http(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers ?? {} },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Opens a WebSocket; resolves with 'open' or the HTTP status the upgrade was refused with. */
function wsAttempt(url: string, headers: Record<string, string> = {}): Promise<'open' | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', (e) => reject(e));
  });
}

describe('stepbox serve', () => {
  let home: string;
  let serve: ServeChild;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-serve-'));
    serve = await spawnServe(['--port', '0'], { STEPBOX_HOME: home });
  });
  afterAll(async () => {
    if (serve) expect(await serve.stop()).toBe(0);
    rmSync(home, { recursive: true, force: true });
  });

  it('prints the full URL with a per-run token as the first stdout line, on a free port', async () => {
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{40,}$/);
    expect(serve.port).toBeGreaterThan(0);
    const other = await spawnServe(['--port', '0'], { STEPBOX_HOME: home });
    try {
      expect(other.port).not.toBe(serve.port);
      expect(other.token).not.toBe(serve.token);
    } finally {
      expect(await other.stop()).toBe(0);
    }
  });

  it('refuses /api/* without the token (401) and answers with it', async () => {
    expect((await http(serve.port, '/api/health')).status).toBe(401);
    expect((await http(serve.port, '/api/health?token=wrong')).status).toBe(401);
    expect((await http(serve.port, '/api/tasks.list', { method: 'POST', body: '{}' })).status).toBe(401);
    expect((await http(serve.port, '/api/nothing-here')).status).toBe(401);

    const health = await http(serve.port, `/api/health?token=${serve.token}`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toMatchObject({ ok: true, value: { version: expect.any(String) } });

    const cases = await http(serve.port, '/api/cases.list', {
      method: 'POST',
      headers: { Authorization: `Bearer ${serve.token}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(cases.status).toBe(200);
    expect(JSON.parse(cases.body)).toMatchObject({ ok: true, value: { cases: expect.any(Array) } });

    const bad = await http(serve.port, `/api/episode.step?token=${serve.token}`, {
      method: 'POST',
      body: '{"id": 5}',
    });
    expect(JSON.parse(bad.body)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const unknown = await http(serve.port, `/api/episode.teleport?token=${serve.token}`, {
      method: 'POST',
      body: '{}',
    });
    expect(unknown.status).toBe(404);
  });

  it('refuses the WebSocket without the token (401) and accepts it with the token', async () => {
    const ws = `ws://127.0.0.1:${serve.port}/ws`;
    expect(await wsAttempt(ws)).toBe(401);
    expect(await wsAttempt(`${ws}?token=nope`)).toBe(401);
    expect(await wsAttempt(`${ws}?token=${serve.token}`)).toBe('open');
  });

  it('refuses a foreign Origin or Host with 403, even with the token', async () => {
    const withToken = `/api/health?token=${serve.token}`;
    expect((await http(serve.port, withToken, { headers: { Origin: 'http://evil.example' } })).status).toBe(
      403,
    );
    expect(
      (await http(serve.port, withToken, { headers: { Host: `evil.example:${serve.port}` } })).status,
    ).toBe(403);
    expect((await http(serve.port, '/', { headers: { Host: `evil.example:${serve.port}` } })).status).toBe(
      403,
    );
    expect(
      (await http(serve.port, withToken, { headers: { Origin: `http://127.0.0.1:${serve.port}` } })).status,
    ).toBe(200);
    const ws = `ws://127.0.0.1:${serve.port}/ws?token=${serve.token}`;
    expect(await wsAttempt(ws, { Origin: 'http://evil.example' })).toBe(403);
  });

  it('serves the page with a strict CSP that allows Monaco workers', async () => {
    const page = await http(serve.port, '/');
    expect([200, 503]).toContain(page.status);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("worker-src 'self' blob:");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect((await http(serve.port, '/../../etc/passwd')).status).toBe(404);
  });
});
