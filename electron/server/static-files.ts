import { existsSync, readFileSync, statSync, type Stats } from 'node:fs';
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
    return sendFile(indexPath, statSync(indexPath), res, { ...headers, 'Cache-Control': 'no-store' });
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
  const st =
    relative.startsWith('..') || !file.startsWith(rendererDir + sep) || !existsSync(file)
      ? null
      : statSync(file);
  if (!st?.isFile()) {
    res.writeHead(404, { ...headers, 'Content-Type': TYPES['.txt'] }).end('not found');
    return;
  }
  const cache = relative.startsWith(`assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache';
  sendFile(file, st, res, { ...headers, 'Cache-Control': cache });
}

/** The window's files served so far, by path: the version read (size, mtime, inode) and its bytes. */
const served = new Map<string, { readonly version: string; readonly bytes: Buffer }>();
let servedBytes = 0;
/** At most this much is kept (the built window is ~6 MB); past it a file is read for each request. */
const SERVED_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Sends a file from memory, read once per version. Why: read from disk for each request, a
 * file's open and reads went through libuv's thread pool, where they queued behind the trace
 * fsyncs of episodes running in the same process: beside two episodes the window's bundle
 * took 14-88 ms to its first byte, 1-2 ms from memory (a window opened beside them, issue
 * 33.9). A file rebuilt in place has a new version and is read again.
 */
function sendFile(file: string, st: Stats, res: ServerResponse, headers: Record<string, string>): void {
  const version = `${st.size}:${st.mtimeMs}:${st.ino}`;
  const kept = served.get(file);
  let bytes = kept?.version === version ? kept.bytes : undefined;
  if (!bytes) {
    try {
      bytes = readFileSync(file);
    } catch (e) {
      res.destroy(e as Error);
      return;
    }
    if (kept) {
      served.delete(file);
      servedBytes -= kept.bytes.length;
    }
    if (servedBytes + bytes.length <= SERVED_MAX_BYTES) {
      served.set(file, { version, bytes });
      servedBytes += bytes.length;
    }
  }
  res.writeHead(200, {
    ...headers,
    'Content-Type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': String(bytes.length),
  });
  res.end(bytes);
}
