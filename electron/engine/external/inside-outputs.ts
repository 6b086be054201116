import type { ToolResult } from '../../../shared/tool-result.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { ChatMessage } from '../agents/agent.js';
import { observationText } from '../harness/conversation.js';
import { contentText } from '../model-api/model-requests.js';

/** Removes what every run changes from a text (a recipe's volatile patterns). */
export type Normaliser = (text: string) => string;

/** A tool output the agent sent in a request: the `role: tool` message answering a call. */
export interface ToolOutput {
  readonly call_id: string;
  readonly content: string;
  /** Its index in the request's messages (for the field a divergence names). */
  readonly index: number;
}

/** One call whose re-run output differs from the recording (drift). */
export interface OutputDrift {
  readonly call_id: string;
  readonly name: string;
  readonly recorded: string;
  readonly actual: string;
}

/** What comparing a re-run request with the recording found. */
export type OutputComparison =
  | { readonly kind: 'same'; readonly drift: readonly OutputDrift[] }
  | {
      readonly kind: 'diverged';
      readonly field: string;
      readonly recorded: unknown;
      readonly actual: unknown;
    };

/** The tool outputs a request adds: the `role: tool` messages after its last assistant message. */
export function newToolOutputs(messages: readonly ChatMessage[]): ToolOutput[] {
  let last = -1;
  messages.forEach((m, i) => {
    if (m.role === 'assistant') last = i;
  });
  const out: ToolOutput[] = [];
  for (let i = last + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool')
      out.push({ call_id: String(m.tool_call_id ?? ''), content: contentText(m.content), index: i });
  }
  return out;
}

/** The text a result stands for in the agent's conversation: its output, else its error, else the result. */
export function outputText(result: ToolResult): string {
  if (typeof result.stdout === 'string' && result.ok) return result.stdout;
  if (result.error) return result.error.message;
  return observationText(result);
}

/**
 * Outputs a person replaced (an override after the step, or a result given before the
 * tool ran), by call id: what the model is shown in their place, in every later request.
 */
export function shownOutputs(history: readonly TraceEvent[]): Map<string, string> {
  const shown = new Map<string, string>();
  for (const e of history) {
    if (e.type === 'override') shown.set(e.call_id, outputText(e.shown));
    else if (e.type === 'tool_result' && e.replaced === true) shown.set(e.call_id, outputText(e.result));
  }
  return shown;
}

/** The messages with replaced tool outputs put in; how many were replaced. */
export function applyShownOutputs(
  messages: readonly ChatMessage[],
  shown: ReadonlyMap<string, string>,
): { messages: ChatMessage[]; replaced: number } {
  let replaced = 0;
  const out = messages.map((m) => {
    if (m.role !== 'tool' || !m.tool_call_id || !shown.has(m.tool_call_id)) return m;
    replaced++;
    return { ...m, content: shown.get(m.tool_call_id) ?? m.content };
  });
  return { messages: out, replaced };
}

/** The calls of step `step` and what each really returned (a person's replacement not applied). */
function recordedOutputs(
  history: readonly TraceEvent[],
  step: number,
): { call_id: string; name: string; text: string }[] {
  const out = new Map<string, { call_id: string; name: string; text: string }>();
  for (const e of history) {
    if (e.step !== step) continue;
    if (e.type === 'tool_call') out.set(e.call_id, { call_id: e.call_id, name: e.name, text: '' });
    else if (e.type === 'tool_result') {
      const c = out.get(e.call_id);
      if (c) out.set(e.call_id, { ...c, text: outputText(e.real ?? e.result) });
    }
  }
  return [...out.values()];
}

/**
 * Compares the tool outputs a re-run agent sent after step `step` with the recording:
 * an output for a call the recorded answer never made, or a different number of
 * outputs, cannot be answered (diverged); a different text (after `normalise`) is drift.
 */
export function compareToolOutputs(
  history: readonly TraceEvent[],
  step: number,
  outputs: readonly ToolOutput[],
  normalise: Normaliser,
): OutputComparison {
  const recorded = recordedOutputs(history, step);
  const known = new Map(recorded.map((r) => [r.call_id, r]));
  for (const o of outputs) {
    if (!known.has(o.call_id))
      return {
        kind: 'diverged',
        field: `messages[${o.index}].tool_call_id`,
        recorded: recorded.map((r) => r.call_id),
        actual: o.call_id,
      };
  }
  if (outputs.length !== recorded.length)
    return {
      kind: 'diverged',
      field: 'tool outputs',
      recorded: recorded.map((r) => r.call_id),
      actual: outputs.map((o) => o.call_id),
    };
  const drift: OutputDrift[] = [];
  for (const o of outputs) {
    const r = known.get(o.call_id);
    if (!r) continue; // every id is known: checked above
    if (normalise(r.text) !== normalise(o.content))
      drift.push({ call_id: o.call_id, name: r.name, recorded: r.text, actual: o.content });
  }
  return { kind: 'same', drift };
}
