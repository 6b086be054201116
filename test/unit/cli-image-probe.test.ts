import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { probeRegistry } from '../../electron/engine/docker/image.js';

describe('registry probe', () => {
  const closers: (() => void)[] = [];
  afterEach(() => closers.splice(0).forEach((close) => close()));

  const listen = async (server: Server | ReturnType<typeof createHttpServer>) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    return (server.address() as { port: number }).port;
  };

  it('counts any HTTP answer (a registry says 401) as reachable', async () => {
    const port = await listen(createHttpServer((_req, res) => res.writeHead(401).end()));
    expect(await probeRegistry(`http://127.0.0.1:${port}/v2/`, 2000)).toBe(true);
  });

  it('counts a refused connection as unreachable', async () => {
    expect(await probeRegistry('http://127.0.0.1:1/v2/', 2000)).toBe(false);
  });

  it('gives up on a silent registry within its bound', async () => {
    const sockets: Socket[] = [];
    const port = await listen(createServer((s) => sockets.push(s)));
    closers.push(() => sockets.forEach((s) => s.destroy()));
    const t0 = performance.now();
    expect(await probeRegistry(`http://127.0.0.1:${port}/v2/`, 300)).toBe(false);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
