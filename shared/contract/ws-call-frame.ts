import { z } from 'zod';

/** A call from the window: `id` pairs it with its result frame (the server checks every one). */
export const CallFrame = z.strictObject({
  kind: z.literal('call'),
  id: z.number().int().nonnegative(),
  op: z.string().min(1),
  input: z.unknown(),
});
/** A call frame. */
export type CallFrame = z.infer<typeof CallFrame>;
