import type { Breakpoint } from '../../../shared/breakpoints.js';
import {
  AssistantMessage,
  NO_STOP_POINTS,
  type HeldAction,
  type HeldStage,
  type StopPoints,
} from '../../../shared/held-action.js';
import { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ExternalTools } from '../agents/agent.js';
import { parseAction, type ParsedAction } from '../agents/parse-action.js';
import { argumentCheck } from '../tools/argument-validator.js';
import type { NewTraceEvent } from '../trace/trace-store.js';
import { evaluateRequestBreakpoints, requestFacts } from './breakpoints.js';
import { HarnessError } from './harness-error.js';
import { describeIssues } from '../../../shared/validation-issues.js';

/** An assistant message as the harness passes it around (tool-call arguments as JSON strings). */
export interface DecidedMessage {
  readonly content: string | null;
  readonly tool_calls?: unknown;
}

/** What a step needs to go on from a stop inside it. */
export interface HeldStep {
  readonly step: number;
  stage: HeldStage;
  why: string;
  breakpoint?: Breakpoint;
  readonly request: unknown;
  /** The model's answer, as recorded in `model_output`. */
  readonly original: DecidedMessage;
  /** The answer as it will be delivered and run (a person's edit of `original`). */
  message: DecidedMessage;
  parsed: ParsedAction;
  readonly replaced: Map<string, ToolResult>;
  /** Seq of the `model_output` the action answers. */
  readonly outputSeq: number;
  readonly raw: string;
  /** Time the decision took, ms (charged to the step's hard limit; pauses are not). */
  readonly decidedMs: number;
  /** True when the step has a hard limit for its tools (no limit for a person deciding). */
  readonly timed: boolean;
  /** Sends the answer to an agent running its own process (exec:), once it is final. */
  readonly deliver?: (message: DecidedMessage) => Promise<void>;
  /** The agent runs the calls itself (sandbox:): what they returned, once it reports them. */
  readonly external?: ExternalTools;
}

/** A held step's public view. */
export function heldView(held: HeldStep): HeldAction {
  const p = held.parsed;
  return {
    step: held.step,
    stage: held.stage,
    why: held.why,
    request: held.request ?? null,
    message: toAssistantMessage(held.message),
    edited: held.message !== held.original,
    ...(held.message !== held.original ? { original: toAssistantMessage(held.original) } : {}),
    calls: p.kind === 'calls' ? p.calls.map((c) => ({ ...c })) : [],
    final: p.kind === 'final' ? p.text : null,
    parse_error: p.kind === 'parse_error' ? p.message : null,
    replaced: [...held.replaced].map(([call_id, result]) => ({ call_id, result })),
  };
}

/**
 * The stops inside a step, as a debugger's: before the model's answer reaches the agent
 * (stop points, or a request breakpoint on the exact request) and before the decided
 * tools run. While a step is held the person may edit the answer, edit a call's
 * arguments (checked by the one argument validator), or give a call's result instead of
 * running it; each edit comes back as the event the runner records. The runner keeps
 * the loop; this keeps what is held and the rules of changing it.
 */
export class StepGate {
  private points: StopPoints = { ...NO_STOP_POINTS };
  private current: HeldStep | null = null;

  constructor(private readonly tools: () => readonly OpenAiTool[]) {}

  /** Where the stepper stops inside a step. */
  stopPoints(): StopPoints {
    return { ...this.points };
  }

  setStopPoints(points: Partial<StopPoints>): StopPoints {
    this.points = { ...this.points, ...points };
    return this.stopPoints();
  }

  /** The step held at a stop inside it, or null. */
  held(): HeldStep | null {
    return this.current;
  }

  /** Forgets the held step (it ran, or a stop or rollback dropped it). */
  release(): void {
    this.current = null;
  }

  /**
   * Holds a freshly decided step before its answer is delivered. Returns true when the
   * stepper stops here: stop points ask for it, or a request breakpoint fires.
   */
  holdBeforeAnswer(
    held: Omit<HeldStep, 'stage' | 'why' | 'message' | 'parsed' | 'replaced'>,
    breakpoints: readonly Breakpoint[],
  ): boolean {
    const hit = evaluateRequestBreakpoints(breakpoints, requestFacts(held.request));
    this.current = {
      ...held,
      stage: 'before_answer',
      why: hit ? hit.message : 'stopped before the answer reaches the agent',
      ...(hit ? { breakpoint: hit.breakpoint } : {}),
      message: held.original,
      parsed: parseAction(held.original, this.tools(), held.step),
      replaced: new Map(),
    };
    return hit !== null || this.points.before_answer;
  }

  /**
   * Moves the held step past its answer stop; true when the stepper stops before the tools
   * run: the stop points ask for it, or a `tool` breakpoint names one of the step's calls
   * (it fires here, before that call runs, not after the step).
   */
  toBeforeTool(breakpoints: readonly Breakpoint[] = []): boolean {
    const held = this.require();
    if (held.stage === 'before_tool') return false;
    held.stage = 'before_tool';
    delete held.breakpoint;
    held.why = 'stopped before the tools run';
    // No tool runs in a final answer (or an answer that failed to parse): "before each tool
    // runs" does not stop there; only "before answers" (the stage before this) does. It held
    // a final answer as "paused before step 3 ends the episode" with "before answers" off.
    if (held.parsed.kind !== 'calls') return false;
    const names = new Set(held.parsed.calls.map((c) => c.name));
    const bp = breakpoints.find((b) => b.kind === 'tool' && names.has(b.name));
    if (bp?.kind === 'tool') {
      held.breakpoint = bp;
      held.why = `${bp.name} is about to run (breakpoint tool=${bp.name})`;
      return true;
    }
    return this.points.before_tool;
  }

  /**
   * A person's edit of the held answer (content and/or tool calls). The edited answer
   * must be usable (known tools, valid arguments): what it would be told otherwise is
   * the error. Returns the `edit` event to record.
   */
  editAnswer(input: unknown): NewTraceEvent {
    const held = this.require();
    const checked = AssistantMessage.safeParse(input);
    if (!checked.success)
      throw new HarnessError(
        'invalid_input',
        `not an assistant message: ${describeIssues(checked.error.issues, 'message')}`,
      );
    const message = normalised(checked.data, held.message);
    return this.apply(held, message, undefined);
  }

  /** A person's edit of one held call's arguments, checked against the tool's schema. Returns the `edit` event. */
  editArguments(callId: string, args: unknown): NewTraceEvent {
    const held = this.require();
    const call = this.callOf(held, callId);
    if (!args || typeof args !== 'object' || Array.isArray(args))
      throw new HarnessError('invalid_input', `the arguments of ${call.name} must be a JSON object`);
    const tool = this.tools().find((t) => t.function.name === call.name);
    if (tool) {
      const ok = argumentCheck(
        call.name,
        tool.function.parameters as Record<string, unknown>,
      )(args as Record<string, unknown>);
      if (!ok.ok)
        throw new HarnessError('invalid_input', `${call.name} cannot take these arguments: ${ok.error}`);
    }
    const message = withArguments(held, callId, args as Record<string, unknown>);
    return this.apply(held, message, callId);
  }

  /** A result a person gives instead of running a held call: that tool does not run; the agent sees this. */
  replaceResult(callId: string, result: unknown): void {
    const held = this.require();
    this.callOf(held, callId);
    const checked = ToolResult.safeParse(result);
    if (!checked.success)
      throw new HarnessError('invalid_input', `not a tool result: ${describeIssues(checked.error.issues)}`);
    held.replaced.set(callId, checked.data);
  }

  private apply(held: HeldStep, message: DecidedMessage, callId: string | undefined): NewTraceEvent {
    const parsed = parseAction(message, this.tools(), held.step);
    if (parsed.kind === 'parse_error')
      throw new HarnessError('invalid_input', `the edited answer cannot be used: ${parsed.message}`);
    const before = held.message;
    held.message = message;
    held.parsed = parsed;
    // A replaced result belongs to a call that is still there.
    const ids = new Set(parsed.kind === 'calls' ? parsed.calls.map((c) => c.id) : []);
    for (const id of [...held.replaced.keys()]) if (!ids.has(id)) held.replaced.delete(id);
    return {
      type: 'edit',
      step: held.step,
      source: 'human',
      cause: held.outputSeq,
      stage: held.stage,
      ...(callId !== undefined ? { call_id: callId } : {}),
      original: before,
      edited: message,
    };
  }

  private callOf(held: HeldStep, callId: string) {
    const p = held.parsed;
    const calls = p.kind === 'calls' ? p.calls : [];
    const call = calls.find((c) => c.id === callId);
    if (!call)
      throw new HarnessError(
        'not_found',
        calls.length === 0
          ? `step ${held.step} calls no tool`
          : `step ${held.step} has no call ${callId}; its calls are ${calls.map((c) => `${c.id} (${c.name})`).join(', ')}`,
      );
    return call;
  }

  private require(): HeldStep {
    if (!this.current)
      throw new HarnessError(
        'conflict',
        'no step is waiting: turn on the stops before the answer or before the tools, then step',
      );
    return this.current;
  }
}

/** The message with tool-call ids kept from `previous` by position and arguments as JSON strings. */
function normalised(m: AssistantMessage, previous: DecidedMessage): DecidedMessage {
  if (!m.tool_calls || m.tool_calls.length === 0) return { content: m.content };
  const prior = Array.isArray(previous.tool_calls) ? (previous.tool_calls as { id?: unknown }[]) : [];
  return {
    content: m.content,
    tool_calls: m.tool_calls.map((c, i) => {
      const id = c.id ?? (typeof prior[i]?.id === 'string' ? (prior[i].id as string) : undefined);
      return {
        ...(id ? { id } : {}),
        type: 'function',
        function: {
          name: c.function.name,
          arguments:
            typeof c.function.arguments === 'string'
              ? c.function.arguments
              : JSON.stringify(c.function.arguments),
        },
      };
    }),
  };
}

/** The held message with one call's arguments replaced (structured calls, or a call written as text). */
function withArguments(held: HeldStep, callId: string, args: Record<string, unknown>): DecidedMessage {
  const p = held.parsed;
  const calls = p.kind === 'calls' ? p.calls : [];
  const index = calls.findIndex((c) => c.id === callId);
  const m = held.message;
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
    const ids = calls.map((c) => c.id);
    return {
      content: m.content,
      tool_calls: (m.tool_calls as Record<string, unknown>[]).map((c, i) => {
        const fn = (c.function ?? {}) as Record<string, unknown>;
        return {
          ...c,
          // The parser's id, so the call keeps its id whatever the model wrote.
          id: typeof c.id === 'string' && c.id !== '' ? c.id : ids[i],
          type: 'function',
          function: { ...fn, arguments: i === index ? JSON.stringify(args) : fn.arguments },
        };
      }),
    };
  }
  // A call written as text: the text becomes the call as JSON, the form the parser reads.
  return { content: JSON.stringify({ name: calls[index].name, arguments: args }) };
}

/** The public form of a held message. */
function toAssistantMessage(m: DecidedMessage): AssistantMessage {
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Record<string, unknown>[]) : [];
  return {
    content: m.content ?? null,
    ...(calls.length > 0
      ? {
          tool_calls: calls.map((c) => {
            const fn = (c.function ?? {}) as Record<string, unknown>;
            return {
              ...(typeof c.id === 'string' ? { id: c.id } : {}),
              type: 'function' as const,
              function: {
                name: typeof fn.name === 'string' ? fn.name : '',
                arguments:
                  typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
              },
            };
          }),
        }
      : {}),
  };
}
