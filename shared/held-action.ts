import { z } from 'zod';
import { ToolResult } from './tool-result.js';
import { ToolCall } from './trace-events.js';

/**
 * Where the stepper stops inside a step, besides between steps: before the model's
 * answer reaches the agent (the answer can be edited) and before the decided tools run
 * (their arguments can be edited, or their result given instead of running them).
 */
export const StopPoints = z.strictObject({
  before_answer: z.boolean(),
  before_tool: z.boolean(),
});
/** Where the stepper stops inside a step. */
export type StopPoints = z.infer<typeof StopPoints>;

export { NO_STOP_POINTS } from './no-stop-points.js';

/** Which stop inside a step: the answer not yet delivered, or the tools not yet run. */
export const HeldStage = z.enum(['before_answer', 'before_tool']);
/** Which stop inside a step. */
export type HeldStage = z.infer<typeof HeldStage>;

/**
 * An assistant message as a person writes it in an edit: text and/or tool calls, whose
 * `arguments` are a JSON string as in the API (an object is accepted too).
 */
export const AssistantMessage = z.strictObject({
  content: z.string().nullable(),
  tool_calls: z
    .array(
      z.object({
        id: z.string().min(1).optional(),
        type: z.literal('function').optional(),
        function: z.object({
          name: z.string().min(1, 'a tool call needs a tool name'),
          arguments: z.union([z.string(), z.record(z.string(), z.unknown())]),
        }),
      }),
    )
    .optional(),
});
/** An assistant message as a person writes it. */
export type AssistantMessage = z.infer<typeof AssistantMessage>;

/**
 * A step held at a stop inside it: the decision is made and recorded, but the answer has
 * not reached the agent (`before_answer`) or the tools have not run (`before_tool`).
 */
export const HeldAction = z.object({
  step: z.number().int().positive(),
  stage: HeldStage,
  /** Why it stopped here, in plain words (stop points on, or the request breakpoint that fired). */
  why: z.string(),
  /** The request the answer answers (messages and tools), as the model got it. */
  request: z.unknown(),
  /** The answer as it will be delivered: the model's, or a person's edit of it. */
  message: AssistantMessage,
  /** True when a person edited the answer or the arguments. */
  edited: z.boolean(),
  /**
   * The model's answer as it came, when a person edited it (else absent): the card labels the
   * edit as the person's and keeps the original in reach (it read "The model says" over the edit).
   */
  original: AssistantMessage.optional(),
  /** The decided action parsed from `message`: tool calls, a final answer, or why it cannot be used. */
  calls: z.array(ToolCall),
  final: z.string().nullable(),
  parse_error: z.string().nullable(),
  /** Results a person gave instead of running a call (by call id): those tools do not run. */
  replaced: z.array(z.object({ call_id: z.string(), result: ToolResult })),
});
/** A step held at a stop inside it. */
export type HeldAction = z.infer<typeof HeldAction>;
