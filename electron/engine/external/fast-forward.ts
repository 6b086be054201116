import { z } from 'zod';
import { canonicalJson } from '../../../shared/jcs.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { ChatRequest, chatMessages, JsonObject } from '../model-api/model-requests.js';

/** A tool result as the agent was shown it at a step (an override's `shown` when there was one). */
export interface RecordedToolAnswer {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly result: ToolResult;
}

/** What an exec agent's step k recorded: the request, the answer, the tool results shown. */
export interface RecordedStep {
  readonly step: number;
  /** The request as the agent sent it (injected messages removed), or null when none was recorded. */
  readonly request: Record<string, unknown> | null;
  readonly answer: { content: string | null; tool_calls?: unknown } | null;
  readonly tools: readonly RecordedToolAnswer[];
}

/** The tool results the agent was shown at `step`, in call order, overrides applied. */
export function toolAnswersAt(history: readonly TraceEvent[], step: number): RecordedToolAnswer[] {
  const calls = new Map<string, { name: string; arguments: Record<string, unknown> }>();
  const answers = new Map<string, RecordedToolAnswer>();
  for (const e of history) {
    if (e.step !== step) continue;
    if (e.type === 'tool_call') calls.set(e.call_id, { name: e.name, arguments: e.arguments });
    else if (e.type === 'tool_result') {
      const call = calls.get(e.call_id);
      if (call) answers.set(e.call_id, { ...call, result: e.result });
    } else if (e.type === 'override') {
      const prior = answers.get(e.call_id);
      if (prior) answers.set(e.call_id, { ...prior, result: e.shown });
    }
  }
  return [...answers.values()];
}

/** An assistant answer as a recording holds it (a `model_output`'s message, an edit). */
const RecordedAnswer = z.looseObject({ content: z.string().nullable(), tool_calls: z.unknown().optional() });

/** The recording of step `step` of a branch's history. */
export function recordedStep(history: readonly TraceEvent[], step: number): RecordedStep {
  let request: Record<string, unknown> | null = null;
  let answer: RecordedStep['answer'] = null;
  for (const e of history) {
    if (e.step !== step) continue;
    // A recording is untrusted input: what it holds is parsed, never cast.
    if (e.type === 'model_request') {
      const recorded = JsonObject.safeParse(e.request);
      if (recorded.success) request = withoutInjected(recorded.data, Number(e.injected ?? 0));
    } else if (e.type === 'model_output') {
      const message = RecordedAnswer.safeParse(e.message);
      answer = message.success ? message.data : { content: e.raw };
    } else if (e.type === 'edit') {
      // The agent got the answer as a person edited it.
      const edited = RecordedAnswer.safeParse(e.edited);
      answer = edited.success ? edited.data : null;
    }
  }
  return { step, request, answer, tools: toolAnswersAt(history, step) };
}

/** The request without the `n` messages stepbox appended (injections the agent never sent). */
function withoutInjected(request: Record<string, unknown>, n: number): Record<string, unknown> {
  if (n <= 0 || !Array.isArray(request.messages)) return request;
  return { ...request, messages: request.messages.slice(0, request.messages.length - n) };
}

/** Keys of a request that say how to deliver the answer, not what is asked. */
const DELIVERY_KEYS = new Set(['stream', 'stream_options']);

/** The first field where two values differ, as a path (`messages[1].content`), with both sides. */
export interface FieldDifference {
  readonly field: string;
  readonly recorded: unknown;
  readonly actual: unknown;
}

/** Where the agent's request differs from the recorded one (delivery options ignored), or null. */
export function requestDifference(
  recorded: Record<string, unknown>,
  actual: Record<string, unknown>,
): FieldDifference | null {
  // Both sides as the model is asked (content as text: a recording holds what the source was
  // given, the agent sends its own form, and recordings made before requests were parsed hold
  // that form too).
  const asked = (r: Record<string, unknown>) => {
    const chat = ChatRequest.safeParse(r);
    return chat.success ? { ...r, messages: chatMessages(chat.data) } : r;
  };
  const strip = (r: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(asked(r)).filter(([k]) => !DELIVERY_KEYS.has(k)));
  return firstDifference(strip(recorded), strip(actual), '');
}

/** The first differing path between two JSON values, or null when they are equal. */
export function firstDifference(a: unknown, b: unknown, path: string): FieldDifference | null {
  const field = path === '' ? '(request)' : path;
  // A key or item on one side only (JCS has no encoding for "absent").
  if (a === undefined || b === undefined) return a === b ? null : { field, recorded: a, actual: b };
  if (canonicalJson(a) === canonicalJson(b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return { field, recorded: a, actual: b };
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDifference(a[k], b[k], path === '' ? k : `${path}.${k}`);
      if (d) return d;
    }
  }
  return { field, recorded: a, actual: b };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** Same tool and same arguments (canonical JSON), the way a call is matched to its recording. */
export function sameCall(a: { name: string; arguments: unknown }, name: string, args: unknown): boolean {
  return a.name === name && canonicalJson(a.arguments) === canonicalJson(args);
}
