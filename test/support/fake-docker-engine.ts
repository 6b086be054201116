import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request the fake engine answered: method and path (query included). */
export interface FakeEngineRequest {
  readonly method: string;
  readonly url: string;
}

/** How the fake engine answers `POST /images/create` (a pull). */
export type PullAnswer =
  /** 200 and these JSON lines, one per write; the image exists afterwards unless one is an `error`. */
  | { readonly lines: readonly object[] }
  /** An HTTP error status with a JSON `message`, as the engine answers a pull it refuses at once. */
  | { readonly status: number; readonly message: string };

/** A fake Docker engine (a small HTTP server on a unix socket), for what a test cannot do with the real one. */
export interface FakeDockerEngine {
  /** The socket's path (DOCKER_HOST=unix://PATH, or dockerode's socketPath). */
  readonly socketPath: string;
  readonly requests: FakeEngineRequest[];
  /** Images the engine has (a pull that succeeds adds its image). */
  readonly images: Set<string>;
  close(): Promise<void>;
}

/**
 * Starts a fake Docker engine answering the calls stepbox makes up to a pull: `_ping`,
 * `version`, `info`, container and volume lists (empty), `events` (held open), an image
 * inspect (200 for `images`, else 404) and `POST /images/create` answered by `pull`.
 * Anything else is a 404 with a JSON message naming the call (a sandbox cannot start).
 */
export async function startFakeDockerEngine(pull: (image: string) => PullAnswer): Promise<FakeDockerEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-fake-engine-'));
  const socketPath = join(dir, 'docker.sock');
  const requests: FakeEngineRequest[] = [];
  const images = new Set<string>();
  const held: ServerResponse[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '' });
    const url = new URL(req.url ?? '/', 'http://engine');
    // dockerode may prefix the API version (/v1.41/...).
    const path = url.pathname.replace(/^\/v\d+\.\d+/, '');
    if (path === '/_ping') return res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    if (path === '/version') return json(res, 200, { Version: '24.0.0-fake', ApiVersion: '1.43' });
    if (path === '/info') return json(res, 200, { CgroupVersion: '2', SecurityOptions: ['name=seccomp'] });
    if (path === '/containers/json') return json(res, 200, []);
    if (path === '/volumes') return json(res, 200, { Volumes: [], Warnings: null });
    if (path === '/events') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders(); // the engine answers at once and streams later
      held.push(res);
      return;
    }
    const inspect = /^\/images\/(.+)\/json$/.exec(path);
    if (inspect && req.method === 'GET') {
      const name = decodeURIComponent(inspect[1]);
      if (images.has(name))
        return json(res, 200, {
          Id: 'sha256:' + '0'.repeat(64),
          Os: 'linux',
          Architecture: 'amd64',
          Config: {},
        });
      return json(res, 404, { message: `No such image: ${name}` });
    }
    if (path === '/images/create' && req.method === 'POST') {
      const from = url.searchParams.get('fromImage') ?? '';
      const tag = url.searchParams.get('tag');
      const image = tag ? `${from}:${tag}` : from;
      const answer = pull(image);
      if ('status' in answer) return json(res, answer.status, { message: answer.message });
      res.writeHead(200, { 'content-type': 'application/json' });
      for (const line of answer.lines) res.write(JSON.stringify(line) + '\r\n');
      if (!answer.lines.some((l) => 'error' in l)) images.add(image);
      res.end();
      return;
    }
    json(res, 404, { message: `the fake engine does not answer ${req.method} ${path}` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, resolve);
  });
  return {
    socketPath,
    requests,
    images,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The JSON lines an engine streams for a pull of two layers (Docker's own words). */
export function pullLines(tag: string): object[] {
  const a = 'a1b2c3d4e5f6';
  const b = '0f9e8d7c6b5a';
  const mb = 1024 * 1024;
  return [
    { status: `Pulling from team/app`, id: tag },
    { status: 'Pulling fs layer', progressDetail: {}, id: a },
    { status: 'Pulling fs layer', progressDetail: {}, id: b },
    { status: 'Downloading', progressDetail: { current: 1 * mb, total: 8 * mb }, progress: '[=> ]', id: a },
    { status: 'Downloading', progressDetail: { current: 1.1 * mb, total: 8 * mb }, progress: '[=> ]', id: a },
    { status: 'Downloading', progressDetail: { current: 4 * mb, total: 8 * mb }, progress: '[==> ]', id: a },
    { status: 'Downloading', progressDetail: { current: 1 * mb, total: 2 * mb }, progress: '[==> ]', id: b },
    { status: 'Verifying Checksum', progressDetail: {}, id: a },
    { status: 'Download complete', progressDetail: {}, id: a },
    { status: 'Download complete', progressDetail: {}, id: b },
    { status: 'Extracting', progressDetail: { current: 8 * mb, total: 8 * mb }, id: a },
    { status: 'Pull complete', progressDetail: {}, id: a },
    { status: 'Pull complete', progressDetail: {}, id: b },
    { status: 'Digest: sha256:' + 'd'.repeat(64) },
    { status: `Status: Downloaded newer image for registry.example/team/app:${tag}` },
  ];
}
