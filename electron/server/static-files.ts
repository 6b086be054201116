import { createReadStream, existsSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { appError } from '../../shared/errors.js';
import { err } from '../../shared/result.js';
import { sendJson } from './api-routes.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>stepbox</title>
<p>The stepbox window is not built yet. Fix: <code>npm run build</code>, then restart <code>stepbox serve</code>.</p>`;

/**
 * Serves the built renderer. `/` is `index.html`; a path that escapes the folder or does
 * not exist is 404. Hashed assets are cached; the page itself never is.
 */
export function serveStatic(
  rendererDir: string,
  pathname: string,
  res: ServerResponse,
  headers: Record<string, string>,
): void {
  const indexPath = join(rendererDir, 'index.html');
  if (pathname === '/' || pathname === '/index.html') {
    if (!existsSync(indexPath)) {
      res.writeHead(503, { ...headers, 'Content-Type': TYPES['.html'], 'Cache-Control': 'no-store' });
      res.end(NOT_BUILT);
      return;
    }
    return sendFile(indexPath, res, { ...headers, 'Cache-Control': 'no-store' });
  }
  let relative: string;
  try {
    relative = normalize(decodeURIComponent(pathname)).replace(/^([/\\])+/, '');
  } catch {
    // A malformed %-escape is a bad request, not a file name.
    sendJson(
      res,
      400,
      err(appError('invalid_input', `the path ${pathname} has a malformed %-escape`)),
      headers,
    );
    return;
  }
  const file = join(rendererDir, relative);
  if (
    relative.startsWith('..') ||
    !file.startsWith(rendererDir + sep) ||
    !existsSync(file) ||
    !statSync(file).isFile()
  ) {
    res.writeHead(404, { ...headers, 'Content-Type': TYPES['.txt'] }).end('not found');
    return;
  }
  const cache = relative.startsWith(`assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache';
  sendFile(file, res, { ...headers, 'Cache-Control': cache });
}

function sendFile(file: string, res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, {
    ...headers,
    'Content-Type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
  });
  createReadStream(file)
    .on('error', (e) => res.destroy(e))
    .pipe(res);
}
