import { z } from 'zod';
import { LiveQaRule } from './qa/live.js';
import { regexProblem } from './breakpoint-kinds.js';

/** A regular expression (JavaScript syntax), checked when the breakpoint is set. */
const Pattern = z
  .string()
  .min(1, 'a pattern is required')
  .superRefine((p, ctx) => {
    const problem = regexProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** A breakpoint on what happened, not only on names. */
export const Breakpoint = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('step'), step: z.number().int().positive() }),
  /** Before a call of the tool named runs (the step held as with a stop before the tools, for that tool only). */
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
  /** Before the model answers: the request offers the tool named. */
  z.object({ kind: z.literal('request_tool'), name: z.string().min(1) }),
  /** Before the model answers: the request does not offer the tool named. */
  z.object({ kind: z.literal('request_no_tool'), name: z.string().min(1) }),
  /** Before the model answers: a message of the request matches the pattern (a regular expression). */
  z.object({ kind: z.literal('request_match'), pattern: Pattern }),
]);

/** A breakpoint. */
export type Breakpoint = z.infer<typeof Breakpoint>;

export {
  BREAKPOINT_KINDS,
  REQUEST_BREAKPOINT_KINDS,
  describeBreakpoint,
  regexProblem,
  sameBreakpoint,
  type BreakpointKindInfo,
} from './breakpoint-kinds.js';
