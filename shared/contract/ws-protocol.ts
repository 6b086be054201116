import { isAppErrorCode } from '../app-error.js';
import type { AppError } from '../errors.js';
import type { Result } from '../result.js';

// The frames the server sends are checked by hand, not with zod: the window's entry reads them
// and must not build schemas before its first render (issue 19.10). The checks are those the
// zod frames made (strict frames, an integer id, a Result whose error is an AppError); event
// payloads are still checked against their stream's zod schema (ws-transport.ts).

/** The path of the contract's WebSocket in web mode (the token goes in `?token=`). */
export const WS_PATH = '/ws';

/** The Result of a call. */
export interface ResultFrame {
  readonly kind: 'result';
  readonly id: number;
  readonly result: Result<unknown>;
}

/** An event of a named stream. */
export interface EventFrame {
  readonly kind: 'event';
  readonly event: string;
  readonly payload: unknown;
}

/** Every frame the server sends. */
export type ServerFrame = ResultFrame | EventFrame;

/** The frame `json` is, or why it is not one (a malformed frame is dropped, never half-read). */
export function parseServerFrame(
  json: unknown,
): { readonly ok: true; readonly frame: ServerFrame } | { readonly ok: false; readonly message: string } {
  const bad = (message: string) => ({ ok: false, message }) as const;
  if (!isRecord(json)) return bad('a frame must be an object');
  if (json.kind === 'event') {
    const extra = extraKey(json, ['kind', 'event', 'payload']);
    if (extra) return bad(`an event frame has an unknown key "${extra}"`);
    if (typeof json.event !== 'string' || json.event === '')
      return bad('an event frame needs its stream name');
    return { ok: true, frame: { kind: 'event', event: json.event, payload: json.payload } };
  }
  if (json.kind !== 'result') return bad(`unknown frame kind ${JSON.stringify(json.kind)}`);
  const extra = extraKey(json, ['kind', 'id', 'result']);
  if (extra) return bad(`a result frame has an unknown key "${extra}"`);
  const { id, result } = json;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
    return bad('a result frame needs a non-negative integer id');
  if (!isRecord(result)) return bad('a result frame needs its result');
  if (result.ok === true)
    return { ok: true, frame: { kind: 'result', id, result: { ok: true, value: result.value } } };
  if (result.ok !== false) return bad('a result needs ok: true or false');
  const error = result.error;
  if (!isRecord(error) || !isAppErrorCode(error.code) || typeof error.message !== 'string')
    return bad('a failed result needs an error {code, message} with a known code');
  const e: AppError = { code: error.code, message: error.message };
  return { ok: true, frame: { kind: 'result', id, result: { ok: false, error: e } } };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function extraKey(x: Record<string, unknown>, keys: readonly string[]): string | undefined {
  return Object.keys(x).find((k) => !keys.includes(k));
}

/**
 * The WebSocket URL for a page served by web mode, carrying the page's token:
 * `http://127.0.0.1:P/?token=T` → `ws://127.0.0.1:P/ws?token=T`.
 */
export function webSocketUrlFor(pageHref: string): string {
  const match = /^(https?):\/\/([^/?#]+)[^?#]*(\?[^#]*)?/.exec(pageHref);
  if (!match) throw new Error(`not an http(s) page URL: ${pageHref}`);
  const token = /[?&]token=([^&#]*)/.exec(match[3] ?? '')?.[1] ?? '';
  return `${match[1] === 'https' ? 'wss' : 'ws'}://${match[2]}${WS_PATH}?token=${token}`;
}
