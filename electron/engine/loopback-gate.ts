import type { IncomingMessage } from 'node:http';

/** The hosts stepbox's local servers answer to (they listen on 127.0.0.1 only). */
export const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost'] as const;

/** What the loopback gate decided: pass, or refuse with 403 and why. */
export type LoopbackVerdict =
  { readonly ok: true } | { readonly ok: false; readonly status: 403; readonly message: string };

/**
 * The one gate every local server applies before anything else (web mode, the episode's
 * model endpoint and MCP server): a `Host` other than 127.0.0.1/localhost on our port
 * (DNS rebinding) or an `Origin` that is present and not this server (another site's
 * page in the user's browser; the MCP transport spec requires the 403) is refused.
 */
export function checkLoopback(req: IncomingMessage, port: number | readonly number[]): LoopbackVerdict {
  // More than one port: a server also reached through a relay on another loopback port (an
  // inside agent's bridge that could not take the endpoint's own port).
  const ports = typeof port === 'number' ? [port] : port;
  const allowedHosts = ports.flatMap((p) => LOOPBACK_HOSTS.map((h) => `${h}:${p}`));
  const host = req.headers.host ?? '';
  if (!allowedHosts.includes(host.toLowerCase()))
    return { ok: false, status: 403, message: `refused: Host "${host}" is not ${allowedHosts.join(' or ')}` };
  const origin = req.headers.origin;
  if (origin !== undefined && !allowedHosts.some((h) => origin.toLowerCase() === `http://${h}`))
    return { ok: false, status: 403, message: `refused: Origin "${origin}" is not this server` };
  return { ok: true };
}
