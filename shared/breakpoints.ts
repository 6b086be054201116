import { z } from 'zod';
import { LiveQaRule } from './qa/live.js';

/** A breakpoint on what happened, not only on names. */
export const Breakpoint = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('step'), step: z.number().int().positive() }),
  z.object({ kind: z.literal('tool'), name: z.string().min(1) }),
  z.object({ kind: z.literal('tool_error') }),
  z.object({ kind: z.literal('nonzero_exit') }),
  z.object({ kind: z.literal('timeout') }),
  z.object({ kind: z.literal('fallback') }),
  z.object({ kind: z.literal('null_value') }),
  z.object({ kind: z.literal('repeat'), count: z.number().int().min(2) }),
  z.object({ kind: z.literal('slow_step'), ms: z.number().positive() }),
  /** A live QA rule raised a flag at this step (any live rule, or the one named). */
  z.object({ kind: z.literal('qa'), rule: LiveQaRule.optional() }),
]);
/** A breakpoint. */
export type Breakpoint = z.infer<typeof Breakpoint>;
