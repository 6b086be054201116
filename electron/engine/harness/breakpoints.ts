import { assertNever } from '../../../shared/assert-never.js';
import type { Breakpoint } from '../../../shared/breakpoints.js';
import { ordinal } from '../../../shared/count-of.js';
import { exitCodeOf } from '../../../shared/exec-wrapper.js';
import { isNullish } from '../../../shared/memory-corruption.js';
import { liveFlagsAt } from '../../../shared/qa/live.js';
import { qaStopText } from '../../../shared/qa/rule-label.js';
import type { Task } from '../../../shared/task.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { StepInfo } from './environment.js';

/** A completed step as breakpoints see it. */
export interface StepFacts {
  readonly info: StepInfo;
  /** Wall time of the whole step (decision, tools, snapshot), ms. */
  readonly wallMs: number;
  /** Action signatures of the steps so far, this one last (null for steps without calls). */
  readonly signatures: readonly (string | null)[];
  /** The task and the branch's events so far (ancestry included), for live QA breakpoints. */
  readonly task?: Task;
  readonly events?: readonly TraceEvent[];
}

/** A breakpoint that fired and why. */
export interface BreakpointHit {
  readonly breakpoint: Breakpoint;
  readonly message: string;
}

/** Observation text that holds "no value" (null/None), empty output excluded. */
function nullishObservation(text: string | undefined, data: unknown): boolean {
  if (data === null) return true;
  if (text === undefined) return false;
  const t = text.trim();
  return t !== '' && isNullish(t);
}

/**
 * Evaluates breakpoints after a step, on what happened, not only on names. A `step`
 * breakpoint N pauses once step N has completed. Returns the first that fires.
 */
export function evaluateBreakpoints(
  breakpoints: readonly Breakpoint[],
  facts: StepFacts,
): BreakpointHit | null {
  const { info } = facts;
  for (const bp of breakpoints) {
    const hit = check(bp, info, facts);
    if (hit) return { breakpoint: bp, message: hit };
  }
  return null;
}

function check(bp: Breakpoint, info: StepInfo, facts: StepFacts): string | null {
  switch (bp.kind) {
    case 'step':
      return info.step === bp.step ? `step ${bp.step} completed` : null;
    case 'tool':
      // Fires before the call runs (StepGate.toBeforeTool), never again after the step.
      return null;
    case 'tool_error': {
      const c = info.calls.find((x) => !x.result.ok);
      return c ? `${c.call.name} failed: ${c.result.error?.code} — ${c.result.error?.message}` : null;
    }
    case 'nonzero_exit': {
      // The exit an agent's own tool wrote in its output's header counts too (exitCodeOf).
      const c = info.calls.find((x) => (exitCodeOf(x.result) ?? 0) !== 0);
      return c ? `${c.call.name} exited ${exitCodeOf(c.result)}` : null;
    }
    case 'timeout': {
      if (info.hardTimeout) return `step ${info.step} hit the hard step timeout`;
      if (info.softTimeout) return `step ${info.step} passed the soft step timeout`;
      const c = info.calls.find((x) => x.result.error?.code === 'timeout');
      return c ? `${c.call.name} timed out` : null;
    }
    case 'fallback': {
      const c = info.calls.find((x) => x.result.fallback);
      return c ? `${c.call.name} returned its fallback after a hard timeout` : null;
    }
    case 'null_value': {
      const w = info.memoryWrites.find((x) => x.corruption !== null || isNullish(x.after));
      if (w) return w.corruption ?? `memory key "${w.key}" written with ${JSON.stringify(w.after ?? null)}`;
      const c = info.calls.find((x) => nullishObservation(x.result.stdout, x.result.data));
      return c ? `${c.call.name} returned ${JSON.stringify((c.result.stdout ?? 'null').trim())}` : null;
    }
    case 'repeat': {
      const sigs = facts.signatures;
      if (sigs.length < bp.count) return null;
      const last = sigs.slice(-bp.count);
      return last[0] !== null && last.every((s) => s === last[0])
        ? `the same call was made ${bp.count} times in a row`
        : null;
    }
    case 'qa': {
      if (!facts.task || !facts.events) return null;
      const [f] = liveFlagsAt(facts.task, facts.events, info.step, bp.rule);
      return f ? qaStopText(f.rule, f.message) : null;
    }
    case 'request_tool':
    case 'request_no_tool':
    case 'request_match':
      // Evaluated on the request, before the answer: see evaluateRequestBreakpoints.
      return null;
    case 'slow_step':
      return facts.wallMs > bp.ms
        ? `step ${info.step} took ${Math.round(facts.wallMs)} ms (> ${bp.ms} ms)`
        : null;
    default:
      return assertNever(bp, 'breakpoint');
  }
}

/** A model request as request breakpoints read it: its messages and the tools it offers. */
export interface RequestFacts {
  readonly messages: readonly unknown[];
  readonly tools: readonly unknown[];
}

/** The request's messages and tools, from a Chat Completions body (missing parts empty). */
export function requestFacts(request: unknown): RequestFacts {
  const r = (request && typeof request === 'object' ? request : {}) as Record<string, unknown>;
  return {
    messages: Array.isArray(r.messages) ? r.messages : [],
    tools: Array.isArray(r.tools) ? r.tools : [],
  };
}

/** The name of an offered tool (OpenAI `{type: 'function', function: {name}}`, or a bare `{name}`). */
function toolName(tool: unknown): string | null {
  const t = (tool && typeof tool === 'object' ? tool : {}) as Record<string, unknown>;
  const fn = (t.function && typeof t.function === 'object' ? t.function : t) as Record<string, unknown>;
  return typeof fn.name === 'string' ? fn.name : null;
}

/** A message's text as a pattern is matched against it: its content, then its tool calls as JSON. */
function messageText(message: unknown): string {
  const m = (message && typeof message === 'object' ? message : {}) as Record<string, unknown>;
  const content = typeof m.content === 'string' ? m.content : m.content ? JSON.stringify(m.content) : '';
  return m.tool_calls ? `${content}\n${JSON.stringify(m.tool_calls)}` : content;
}

/** What a request's message is, by its role, for a person ("message 8 (tool)" said nothing). */
const MESSAGE_ROLES: Readonly<Record<string, string>> = {
  system: 'the system prompt',
  user: "the user's message",
  assistant: "the model's earlier answer",
  tool: 'a tool result',
};

/**
 * Evaluates the request breakpoints (`request_tool`, `request_no_tool`, `request_match`)
 * on the exact request about to be answered, before the answer reaches the agent.
 * Returns the first that fires, with which message or tool made it fire.
 */
export function evaluateRequestBreakpoints(
  breakpoints: readonly Breakpoint[],
  facts: RequestFacts,
): BreakpointHit | null {
  const names = facts.tools.map(toolName);
  for (const bp of breakpoints) {
    if (bp.kind === 'request_tool' && names.includes(bp.name))
      return { breakpoint: bp, message: `the request offers the tool ${bp.name}` };
    if (bp.kind === 'request_no_tool' && !names.includes(bp.name))
      return { breakpoint: bp, message: `the request does not offer the tool ${bp.name}` };
    if (bp.kind === 'request_match') {
      const re = new RegExp(bp.pattern);
      const i = facts.messages.findIndex((m) => re.test(messageText(m)));
      if (i >= 0) {
        const role = (facts.messages[i] as { role?: unknown }).role;
        const what = typeof role === 'string' ? ` (${MESSAGE_ROLES[role] ?? `a ${role} message`})` : '';
        return {
          breakpoint: bp,
          message: `the ${ordinal(i + 1)} message the model is about to read${what} matches /${bp.pattern}/`,
        };
      }
    }
  }
  return null;
}
