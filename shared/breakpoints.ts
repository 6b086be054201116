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

/** A breakpoint kind as the window offers it: plain words, and the value it needs if any. */
export interface BreakpointKindInfo {
  readonly kind: Breakpoint['kind'];
  /** What it pauses on, in words a person reads in a menu. */
  readonly label: string;
  /** The field the value goes in, its label and whether it is a number; absent when there is none. */
  readonly value?: {
    readonly field: 'step' | 'name' | 'count' | 'ms';
    readonly label: string;
    readonly numeric: boolean;
  };
}

/** Every breakpoint kind the engine evaluates, in the order the window lists them. */
export const BREAKPOINT_KINDS: readonly BreakpointKindInfo[] = [
  { kind: 'step', label: 'after step', value: { field: 'step', label: 'step', numeric: true } },
  { kind: 'tool', label: 'when a tool is called', value: { field: 'name', label: 'tool', numeric: false } },
  { kind: 'tool_error', label: 'when a tool fails' },
  { kind: 'nonzero_exit', label: 'when a command exits non-zero' },
  { kind: 'timeout', label: 'on a timeout' },
  { kind: 'fallback', label: 'when a tool returns its fallback' },
  { kind: 'null_value', label: 'when a null/None value appears' },
  {
    kind: 'repeat',
    label: 'when the same call repeats',
    value: { field: 'count', label: 'times', numeric: true },
  },
  { kind: 'slow_step', label: 'when a step is slow', value: { field: 'ms', label: 'ms', numeric: true } },
  { kind: 'qa', label: 'when a QA rule flags a step (loop, reward hacking, memory corruption)' },
];

/** A breakpoint in plain words ("after step 3", "when tool lookup is called"). */
export function describeBreakpoint(bp: Breakpoint): string {
  switch (bp.kind) {
    case 'step':
      return `after step ${bp.step}`;
    case 'tool':
      return `when ${bp.name} is called`;
    case 'repeat':
      return `when the same call repeats ${bp.count} times`;
    case 'slow_step':
      return `when a step takes over ${bp.ms} ms`;
    case 'qa':
      return bp.rule
        ? `when the QA rule ${bp.rule.replace(/_/g, ' ')} flags a step`
        : 'when a QA rule flags a step (loop, reward hacking, memory corruption)';
    default:
      return BREAKPOINT_KINDS.find((k) => k.kind === bp.kind)?.label ?? bp.kind;
  }
}

/** True when two breakpoints pause on the same thing (the list keeps one of each). */
export function sameBreakpoint(a: Breakpoint, b: Breakpoint): boolean {
  const fields = (x: Breakpoint) => JSON.stringify(Object.entries(x).sort(([k], [l]) => k.localeCompare(l)));
  return fields(a) === fields(b);
}
