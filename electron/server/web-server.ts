import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WS_PATH } from '../../shared/contract/index.js';
import { logger } from '../engine/log.js';
import type { AppServices } from '../services/app-services.js';
import { handleApi, sendJson } from './api-routes.js';
import { LOOPBACK_HOSTS, checkRequest, newToken, securityHeaders } from './security.js';
import { serveStatic } from './static-files.js';
import { WsGateway } from './ws-gateway.js';

const log = logger('serve');

/** Options of {@link listen}. */
export interface WebServerOptions {
  readonly services: AppServices;
  /** The built renderer (`renderer/dist`). */
  readonly rendererDir: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Only loopback: `127.0.0.1` (default) or `localhost`. */
  readonly host?: string;
  /** The per-run token; a fresh random one by default. */
  readonly token?: string;
}

/** A listening web-mode server. */
export interface WebServer {
  /** The full page URL with the token: `http://127.0.0.1:PORT/?token=…`. */
  readonly url: string;
  readonly token: string;
  readonly port: number;
  /** Stops listening and closes every socket (the services are the caller's to dispose). */
  close(): Promise<void>;
}

/**
 * Serves the renderer, `/api/*` and the contract's WebSocket on loopback only. Every
 * request passes the gate first: a foreign Host or Origin is 403; `/api/*` and the
 * WebSocket without the token are 401. Static files need no token (they hold no data).
 */
export async function listen(options: WebServerOptions): Promise<WebServer> {
  const host = options.host ?? '127.0.0.1';
  if (!(LOOPBACK_HOSTS as readonly string[]).includes(host))
    throw new Error(`web mode listens on loopback only (127.0.0.1 or localhost), not "${host}"`);
  const token = options.token ?? newToken();
  const started = Date.now();
  const gateway = new WsGateway(options.services);
  let port = 0;

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const headers = securityHeaders(port);
    const pathname = pathnameOf(req);
    if (pathname === null) {
      sendJson(res, 400, badTarget(req), headers);
      return;
    }
    const isApi = pathname === '/api' || pathname.startsWith('/api/');
    const verdict = checkRequest(req, port, token, isApi || pathname === WS_PATH);
    if (!verdict.ok) {
      res.writeHead(verdict.status, { ...headers, 'Content-Type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ ok: false, error: { code: 'unauthorized', message: verdict.message } }));
      return;
    }
    if (isApi) {
      handleApi(req, res, pathname, options.services, headers, started).catch((e: unknown) => {
        const message = e instanceof Error ? e.message : String(e);
        log.error(`${req.method} ${pathname}: ${message}`);
        if (res.headersSent) res.end();
        else
          sendJson(
            res,
            500,
            {
              ok: false,
              error: { code: 'internal', message: `stepbox serve failed on this request: ${message}` },
            },
            headers,
          );
      });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, headers).end();
      return;
    }
    serveStatic(options.rendererDir, pathname, res, headers);
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const pathname = pathnameOf(req);
    const verdict =
      pathname === WS_PATH
        ? checkRequest(req, port, token, true)
        : ({ ok: false, status: 403, message: 'no such socket' } as const);
    if (!verdict.ok) {
      const reason = verdict.status === 401 ? 'Unauthorized' : 'Forbidden';
      socket.end(`HTTP/1.1 ${verdict.status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    gateway.upgrade(req, socket, head);
  };

  const server = createServer(onRequest);
  server.on('upgrade', onUpgrade);
  server.on('clientError', (_e, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host === 'localhost' ? '127.0.0.1' : host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    token,
    port,
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The request's path, or null when its target is not a URL path (`//[`, …). */
function pathnameOf(req: IncomingMessage): string | null {
  try {
    return new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  } catch {
    return null;
  }
}

function badTarget(req: IncomingMessage): unknown {
  return {
    ok: false,
    error: {
      code: 'invalid_input',
      message: `the request target ${JSON.stringify(req.url)} is not a URL path`,
    },
  };
}
