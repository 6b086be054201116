import { isPersonEdit, type TraceEvent } from '../../../shared/trace-events.js';
import type { Task } from '../../../shared/task.js';
import type { ChatMessage } from '../agents/agent.js';
import { Conversation } from '../harness/conversation.js';

/** Who put a message in front of the agent, when it was not the model or the environment. */
export type MessageOrigin = 'injected' | 'human';

/** The conversation an agent saw, with each assistant message's step and each person-made message labelled. */
export interface LabelledConversation {
  readonly messages: readonly ChatMessage[];
  /** Step of each assistant message (by index into `messages`). */
  readonly assistantStep: ReadonlyMap<number, number>;
  /** Indices of messages a person injected or overrode. */
  readonly origin: ReadonlyMap<number, MessageOrigin>;
  /** True when a person acted in the episode (injection, override, terminal command). */
  readonly touchedByPerson: boolean;
}

/**
 * Replays a branch's events through the harness's own {@link Conversation}, so exports
 * show exactly what the agent saw, and remembers which messages came from a person.
 * `until` stops before the first event with that seq (the input of a preference pair).
 */
export function labelledConversation(
  task: Task,
  events: readonly TraceEvent[],
  until = Infinity,
): LabelledConversation {
  const conv = new Conversation(task);
  const steps = new Map<ChatMessage, number>();
  const origin = new Map<ChatMessage, MessageOrigin>();
  let touchedByPerson = false;
  for (const e of events) {
    if (e.seq >= until) break;
    conv.apply(e);
    const now = conv.current();
    if (e.type === 'model_output') steps.set(now[now.length - 1], e.step);
    else if (e.type === 'injected') {
      origin.set(now[now.length - 1], 'injected');
      touchedByPerson = true;
    } else if (e.type === 'override') {
      const m = now.find((x) => x.tool_call_id === e.call_id);
      if (m) origin.set(m, 'human');
      touchedByPerson = true;
    } else if (e.type === 'human_command') touchedByPerson = true;
    else if (isPersonEdit(e)) {
      // An edited answer is the person's words in the agent's turn; a given result, theirs in the tool's.
      const m =
        e.type === 'tool_result'
          ? now.find((x) => x.tool_call_id === e.call_id)
          : [...now].reverse().find((x) => x.role === 'assistant');
      if (m) origin.set(m, 'human');
      touchedByPerson = true;
    }
  }
  const messages = conv.current();
  const assistantStep = new Map<number, number>();
  const originAt = new Map<number, MessageOrigin>();
  messages.forEach((m, i) => {
    const s = steps.get(m);
    if (s !== undefined) assistantStep.set(i, s);
    const o = origin.get(m);
    if (o) originAt.set(i, o);
  });
  return { messages, assistantStep, origin: originAt, touchedByPerson };
}
