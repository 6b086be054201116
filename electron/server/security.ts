import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { checkLoopback, LOOPBACK_HOSTS } from '../engine/loopback-gate.js';

export { LOOPBACK_HOSTS } from '../engine/loopback-gate.js';

/** A fresh per-run token (URL-safe, 256 bits). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What the request gate decided: pass, or refuse with a status and why. */
export type GateVerdict =
  { readonly ok: true } | { readonly ok: false; readonly status: 401 | 403; readonly message: string };

/** The token a request carries: `?token=`, `Authorization: Bearer`, or `X-Stepbox-Token`. */
export function tokenOf(req: IncomingMessage): string | null {
  let fromQuery: string | null = null;
  try {
    fromQuery = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams.get('token');
  } catch {
    // Not a URL path: no token in it (the server answers 400 before asking).
  }
  if (fromQuery) return fromQuery;
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice('Bearer '.length).trim();
  const header = req.headers['x-stepbox-token'];
  return typeof header === 'string' ? header : null;
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The gate of web mode: a `Host` other than 127.0.0.1/localhost on our port (DNS
 * rebinding) or a foreign `Origin` (another site's page) is refused with 403; where a
 * token is required, a missing or wrong one is refused with 401.
 */
export function checkRequest(
  req: IncomingMessage,
  port: number,
  token: string,
  needToken: boolean,
): GateVerdict {
  const loopback = checkLoopback(req, port);
  if (!loopback.ok) return loopback;
  if (!needToken) return { ok: true };
  const given = tokenOf(req);
  if (!given || !sameToken(given, token))
    return {
      ok: false,
      status: 401,
      message: 'unauthorized: a valid token is required (the URL stepbox serve printed)',
    };
  return { ok: true };
}

/**
 * The page's Content-Security-Policy: only our own scripts; Monaco needs inline styles
 * and blob: workers; the socket is ours. No frames, plugins or form posts.
 */
export function contentSecurityPolicy(port: number): string {
  const sockets = LOOPBACK_HOSTS.map((h) => `ws://${h}:${port}`).join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self' ${sockets}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** Headers every response carries. */
export function securityHeaders(port: number): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(port),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
