import type { Flag } from '../../../shared/qa/flag.js';
import { atLeast } from '../../../shared/qa/flag.js';
import type { Task } from '../../../shared/task.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import { labelledConversation, type MessageOrigin } from './labelled-conversation.js';
import { taskTools } from './task-tools.js';

/** A chat message of OpenAI's fine-tuning format. */
export interface FineTuneMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly name?: string;
  readonly tool_calls?: readonly {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
  }[];
  readonly tool_call_id?: string;
  /** Assistant messages only: 1 to train on, 0 to keep as context. */
  readonly weight?: 0 | 1;
}

/** One line of an OpenAI chat fine-tuning file. */
export interface FineTuneRecord {
  readonly messages: FineTuneMessage[];
  readonly tools: OpenAiTool[];
  readonly parallel_tool_calls: boolean;
}

/** Which messages a person made, kept in the sidecar (tool messages cannot carry a `name`). */
export interface PersonMessage {
  readonly index: number;
  readonly origin: MessageOrigin;
}

/**
 * One branch as a fine-tuning conversation: the messages the agent saw (rebuilt with the
 * harness's own conversation builder), injected user/system messages named `injected`,
 * and each assistant turn weighted 1, or 0 when a QA flag of warning or worse points at
 * its step (a loop, a protected edit) so the model does not learn it. Returns null when
 * the branch has no assistant turn.
 */
export function fineTuneRecord(
  task: Task,
  events: readonly TraceEvent[],
  flags: readonly Flag[],
): { record: FineTuneRecord; person: PersonMessage[]; touchedByPerson: boolean } | null {
  const conv = labelledConversation(task, events);
  const badSteps = new Set(
    flags.filter((f) => atLeast(f.severity, 'warning') && f.step > 0).map((f) => f.step),
  );
  const person: PersonMessage[] = [];
  const messages: FineTuneMessage[] = conv.messages.map((m, i) => {
    const origin = conv.origin.get(i);
    if (origin) person.push({ index: i, origin });
    const out: { -readonly [K in keyof FineTuneMessage]: FineTuneMessage[K] } = {
      role: m.role,
      content: m.content,
    };
    if (m.tool_calls && m.tool_calls.length)
      out.tool_calls = m.tool_calls.map((c) => ({ ...c, function: { ...c.function } }));
    if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
    if (origin && (m.role === 'user' || m.role === 'system')) out.name = origin;
    if (m.role === 'assistant') {
      const step = conv.assistantStep.get(i);
      out.weight = step !== undefined && badSteps.has(step) ? 0 : 1;
    }
    return out;
  });
  // A branch cut off mid-step leaves calls without answers: end at the last complete turn.
  while (messages.length && !answered(messages)) messages.pop();
  if (!messages.some((m) => m.role === 'assistant')) return null;
  return {
    record: {
      messages,
      tools: taskTools(task),
      parallel_tool_calls: messages.some((m) => (m.tool_calls?.length ?? 0) > 1),
    },
    person: person.filter((p) => p.index < messages.length),
    touchedByPerson: conv.touchedByPerson,
  };
}

function answered(messages: readonly FineTuneMessage[]): boolean {
  return validateFineTuneRecord({ messages: [...messages], tools: [], parallel_tool_calls: false }).every(
    (p) => !p.startsWith('unanswered'),
  );
}

/**
 * Checks a record against the fine-tuning rules this export promises: every tool call's
 * arguments a JSON string, every call answered by a tool message before the next
 * assistant turn, no stray tool message, `weight` only on assistant messages and only 0
 * or 1. Returns the problems (empty when valid).
 */
export function validateFineTuneRecord(record: FineTuneRecord): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  const known = new Set<string>();
  record.messages.forEach((m, i) => {
    if (m.weight !== undefined && (m.role !== 'assistant' || (m.weight !== 0 && m.weight !== 1)))
      problems.push(
        `message ${i}: weight ${String(m.weight)} on a ${m.role} message (only 0 or 1, assistant only)`,
      );
    if (m.role === 'assistant') {
      if (open.size) problems.push(`unanswered tool calls ${[...open].join(', ')} before message ${i}`);
      open = new Set();
      for (const c of m.tool_calls ?? []) {
        if (typeof c.function.arguments !== 'string')
          problems.push(`message ${i}: arguments of ${c.id} are not a string`);
        else {
          try {
            JSON.parse(c.function.arguments);
          } catch {
            problems.push(`message ${i}: arguments of ${c.id} are not JSON`);
          }
        }
        open.add(c.id);
        known.add(c.id);
      }
      if (m.content === null && !(m.tool_calls ?? []).length)
        problems.push(`message ${i}: empty assistant message`);
    } else if (m.role === 'tool') {
      if (!m.tool_call_id || !known.has(m.tool_call_id))
        problems.push(`message ${i}: tool message answers no call`);
      open.delete(m.tool_call_id ?? '');
    }
  });
  if (open.size) problems.push(`unanswered tool calls ${[...open].join(', ')} at the end`);
  return problems;
}
