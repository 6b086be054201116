// Web mode serves the built window from memory (read once per file version): a file rebuilt in
// place (`npm run build` while `stepbox serve` runs) is served anew, never the copy kept.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, type WebServer } from '../../electron/server/web-server.js';
import type { AppServices } from '../../electron/services/app-services.js';

function fetchFile(
  port: number,
  path: string,
): Promise<{ status: number; length: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, length: res.headers['content-length'], body }),
      );
    }).on('error', reject);
  });
}

describe('web mode serving the window', () => {
  let server: WebServer;
  let dir: string;
  const services = {
    handle: async () => ({ ok: true, value: null }),
    subscribeAudience: () => () => undefined,
    openClient: () => undefined,
    closeClient: async () => undefined,
  } as unknown as AppServices;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-serve-static-'));
    mkdirSync(join(dir, 'assets'));
    server = await listen({ services, rendererDir: dir });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a file rebuilt in place anew, even at the same size', async () => {
    const file = join(dir, 'assets', 'app.js');
    writeFileSync(file, 'console.log(1);');
    expect(await fetchFile(server.port, '/assets/app.js')).toEqual({
      status: 200,
      length: '15',
      body: 'console.log(1);',
    });
    // Kept: asked again, the same bytes.
    expect((await fetchFile(server.port, '/assets/app.js')).body).toBe('console.log(1);');

    writeFileSync(file, 'console.log("rebuilt");');
    expect((await fetchFile(server.port, '/assets/app.js')).body).toBe('console.log("rebuilt");');

    // The same size, a later mtime.
    writeFileSync(file, 'console.log("rebuilt!");'.replace('!', '?'));
    utimesSync(file, new Date(), new Date(Date.now() + 10_000));
    expect((await fetchFile(server.port, '/assets/app.js')).body).toBe('console.log("rebuilt?");');

    writeFileSync(join(dir, 'index.html'), '<p>one</p>');
    expect((await fetchFile(server.port, '/')).body).toBe('<p>one</p>');
    writeFileSync(join(dir, 'index.html'), '<p>two, longer</p>');
    expect((await fetchFile(server.port, '/')).body).toBe('<p>two, longer</p>');
    expect((await fetchFile(server.port, '/assets/none.js')).status).toBe(404);
  });
});
