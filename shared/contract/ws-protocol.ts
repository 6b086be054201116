import { z } from 'zod';
import { AppError } from '../errors.js';

/** The path of the contract's WebSocket in web mode (the token goes in `?token=`). */
export const WS_PATH = '/ws';

/** A call from the window: `id` pairs it with its result frame. */
export const CallFrame = z.strictObject({
  kind: z.literal('call'),
  id: z.number().int().nonnegative(),
  op: z.string().min(1),
  input: z.unknown(),
});
/** A call frame. */
export type CallFrame = z.infer<typeof CallFrame>;

/** The Result of a call. */
export const ResultFrame = z.strictObject({
  kind: z.literal('result'),
  id: z.number().int().nonnegative(),
  result: z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), value: z.unknown() }),
    z.object({ ok: z.literal(false), error: AppError }),
  ]),
});
/** A result frame. */
export type ResultFrame = z.infer<typeof ResultFrame>;

/** An event of a named stream. */
export const EventFrame = z.strictObject({
  kind: z.literal('event'),
  event: z.string().min(1),
  payload: z.unknown(),
});
/** An event frame. */
export type EventFrame = z.infer<typeof EventFrame>;

/** Every frame the server sends. */
export const ServerFrame = z.discriminatedUnion('kind', [ResultFrame, EventFrame]);
/** A frame the server sends. */
export type ServerFrame = z.infer<typeof ServerFrame>;

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
