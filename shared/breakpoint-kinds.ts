import type { Breakpoint } from './breakpoints.js';

// What the window shows of breakpoints, apart from their schema (breakpoints.ts, which reads
// every live QA rule): the window's first render must build no zod schema (issue 19.10).

/** Why `pattern` is not a regular expression, or null when it is one. */
export function regexProblem(pattern: string): string | null {
  try {
    new RegExp(pattern);
    return null;
  } catch (e) {
    return `"${pattern}" is not a regular expression: ${(e as Error).message.replace(/^Invalid regular expression: /, '')}`;
  }
}

/** Breakpoint kinds evaluated on the request, before the model's answer reaches the agent. */
export const REQUEST_BREAKPOINT_KINDS: readonly Breakpoint['kind'][] = [
  'request_tool',
  'request_no_tool',
  'request_match',
];
/** A breakpoint kind as the window offers it: plain words, and the value it needs if any. */
export interface BreakpointKindInfo {
  readonly kind: Breakpoint['kind'];
  /** What it pauses on, in words a person reads in a menu. */
  readonly label: string;
  /** The field the value goes in, its label and whether it is a number; absent when there is none. */
  readonly value?: {
    readonly field: 'step' | 'name' | 'count' | 'ms' | 'pattern';
    readonly label: string;
    readonly numeric: boolean;
  };
}

/**
 * Every breakpoint kind the engine evaluates, in the order the window lists them. A label fits
 * the 1024-wide library column's menu (about 31 characters): "before the answer, when a messa"
 * was cut there; the request kinds are grouped under "Before the model's answer" in the menu
 * ({@link breakpointGroup}), and a breakpoint added says it whole ({@link describeBreakpoint}).
 */
export const BREAKPOINT_KINDS: readonly BreakpointKindInfo[] = [
  { kind: 'step', label: 'after step', value: { field: 'step', label: 'step', numeric: true } },
  { kind: 'tool', label: 'before a tool runs', value: { field: 'name', label: 'tool', numeric: false } },
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
  // The rules it stands for are said once it is set (describeBreakpoint): in the menu they cut
  // the label at any width the breakpoints' column has.
  { kind: 'qa', label: 'when a QA rule flags a step' },
  {
    kind: 'request_tool',
    label: 'when the request offers a tool',
    value: { field: 'name', label: 'tool', numeric: false },
  },
  {
    kind: 'request_no_tool',
    label: 'when the request lacks a tool',
    value: { field: 'name', label: 'tool', numeric: false },
  },
  {
    kind: 'request_match',
    label: 'when a request message matches',
    value: { field: 'pattern', label: 'pattern', numeric: false },
  },
];

/** The menu group a kind is listed under: the request kinds pause before the model's answer. */
export function breakpointGroup(kind: Breakpoint['kind']): string | null {
  return REQUEST_BREAKPOINT_KINDS.includes(kind) ? 'Before the model’s answer' : null;
}

/** A breakpoint in plain words ("after step 3", "when tool lookup is called"). */
export function describeBreakpoint(bp: Breakpoint): string {
  switch (bp.kind) {
    case 'step':
      return `after step ${bp.step}`;
    case 'tool':
      return `before ${bp.name} runs`;
    case 'repeat':
      return `when the same call repeats ${bp.count} times`;
    case 'slow_step':
      return `when a step takes over ${bp.ms} ms`;
    case 'request_tool':
      return `before the answer, when the model is offered ${bp.name}`;
    case 'request_no_tool':
      return `before the answer, when the model is not offered ${bp.name}`;
    case 'request_match':
      return `before the answer, when a message matches /${bp.pattern}/`;
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
