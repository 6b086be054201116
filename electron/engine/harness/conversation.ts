import type { Task } from '../../../shared/task.js';
import { workdirOf } from '../../../shared/workdir.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { ChatMessage } from '../agents/agent.js';
import { countOf } from '../../../shared/count-of.js';

/** The system prompt every agent kind gets: how tools and final answers work. */
export function systemPrompt(task: Task): string {
  return [
    `You are an agent working in a Linux sandbox; the workspace is ${workdirOf(task.sandbox)}.`,
    `Task: ${task.name}.`,
    `Use the tools to act. When you are done, reply with a short final answer in plain text and no tool call.`,
    `You have at most ${countOf(task.max_steps, 'step')}.`,
  ].join(' ');
}

/** The conversation before step 1: the system prompt and the goal. */
export function initialMessages(task: Task): ChatMessage[] {
  return [
    { role: 'system', content: systemPrompt(task) },
    { role: 'user', content: task.goal },
  ];
}

/** What the agent sees of a tool result: the result without timings (so replays ask the same). */
export function observationText(result: ToolResult): string {
  const { duration_ms: _d, bytes: _b, ...shown } = result;
  return JSON.stringify(shown);
}

/** The observation the agent gets after an output it could not parse. */
export function parseErrorText(message: string): string {
  return `Your last output could not be used: ${message}`;
}

/** An assistant message as it goes back into the conversation, with tool calls normalised for the API. */
export function assistantMessage(
  message: { content: string | null; tool_calls?: unknown },
  step: number,
): ChatMessage {
  const out: ChatMessage = { role: 'assistant', content: message.content ?? null };
  if (!Array.isArray(message.tool_calls) || message.tool_calls.length === 0) return out;
  const calls = message.tool_calls.map((c, i) => {
    const rec = (c && typeof c === 'object' ? c : {}) as Record<string, unknown>;
    const fn = (rec.function && typeof rec.function === 'object' ? rec.function : {}) as Record<
      string,
      unknown
    >;
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    return {
      id: typeof rec.id === 'string' && rec.id !== '' ? rec.id : `call_${step}_${i + 1}`,
      type: 'function' as const,
      function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: args },
    };
  });
  return { ...out, tool_calls: calls };
}

/**
 * Builds the conversation from trace events, so the live view, a rollback, a fork and a
 * resume all see the same messages. Tool results answer structured calls as `tool`
 * messages; calls written as text are answered with `user` messages; warnings shown
 * to the agent wait until a step's tool results are in (the API wants tool messages
 * right after their assistant message).
 */
export class Conversation {
  private readonly messages: ChatMessage[];
  private pending: ChatMessage[] = [];
  private via: 'tool_calls' | 'text' = 'tool_calls';
  /** call id → index of the message answering it (for overrides). */
  private answers = new Map<string, number>();

  constructor(task: Task) {
    this.messages = initialMessages(task);
  }

  /** The messages an agent sees now. */
  current(): ChatMessage[] {
    return [...this.messages, ...this.pending];
  }

  /** Applies one trace event. Events that the agent does not see are ignored. */
  apply(event: TraceEvent): void {
    switch (event.type) {
      case 'model_output':
        this.flush();
        this.messages.push(
          assistantMessage(
            (event.message ?? { content: event.raw }) as { content: string | null },
            event.step,
          ),
        );
        this.via = 'tool_calls';
        return;
      case 'edit': {
        // A person's edit of the answer: the agent's own last message is what it was given.
        const at = this.messages.map((m) => m.role).lastIndexOf('assistant');
        if (at >= 0)
          this.messages[at] = assistantMessage(event.edited as { content: string | null }, event.step);
        return;
      }
      case 'action':
        this.via = (event.via as 'tool_calls' | 'text' | undefined) ?? 'tool_calls';
        return;
      case 'parse_error': {
        const ids = (event.call_ids as string[] | undefined) ?? [];
        const text = parseErrorText(event.message);
        if (ids.length > 0)
          for (const id of ids) this.messages.push({ role: 'tool', tool_call_id: id, content: text });
        else this.messages.push({ role: 'user', content: text });
        return;
      }
      case 'tool_result': {
        const text = observationText(event.result);
        this.answers.set(event.call_id, this.messages.length);
        this.messages.push(
          this.via === 'tool_calls'
            ? { role: 'tool', tool_call_id: event.call_id, content: text }
            : { role: 'user', content: `Result of ${event.name} (${event.call_id}): ${text}` },
        );
        return;
      }
      case 'override': {
        const at = this.answers.get(event.call_id);
        if (at === undefined) return;
        const old = this.messages[at];
        const text = observationText(event.shown);
        this.messages[at] =
          old.role === 'tool'
            ? { ...old, content: text }
            : { ...old, content: `Result (${event.call_id}): ${text}` };
        return;
      }
      case 'injected':
        this.flush();
        this.messages.push({ role: event.role, content: event.content });
        return;
      case 'warning':
        if (event.observation)
          this.pending.push({ role: 'user', content: `[stepbox warning] ${event.message}` });
        return;
      default:
        return;
    }
  }

  private flush(): void {
    this.messages.push(...this.pending);
    this.pending = [];
  }
}
