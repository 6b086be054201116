import type { ToolResult } from '../tool-result.js';
import type { TraceEventOf } from '../trace-events.js';
import { flag, type Flag } from './flag.js';
import type { QaInput } from './qa-input.js';

/** A chat message as a recorded request holds it (only what the rule reads). */
interface ShownMessage {
  readonly role?: unknown;
  readonly content?: unknown;
  readonly tool_call_id?: unknown;
}

/** The messages of a recorded model request, or null when it holds none (an agent that records no request). */
function shownMessages(request: unknown): ShownMessage[] | null {
  if (!request || typeof request !== 'object') return null;
  const messages = (request as { messages?: unknown }).messages;
  return Array.isArray(messages)
    ? (messages.filter((m) => m && typeof m === 'object') as ShownMessage[])
    : null;
}

function textOf(m: ShownMessage): string {
  if (typeof m.content === 'string') return m.content;
  return Array.isArray(m.content) ? JSON.stringify(m.content) : '';
}

/** A result's output as the agent is shown it: its first characters. */
function outputStart(r: ToolResult): string {
  return (r.stdout || r.stderr || r.error?.message || '').slice(0, 64);
}

/**
 * True when the messages still show the result of `call_id`: its message is there and carries
 * the output's start — raw (an agent that runs its own tools sends its output as text: Codex,
 * Claude Code, every inside agent), JSON-escaped once (stepbox's own observations are JSON) or
 * twice (content as parts is JSON once more).
 */
function resultShown(messages: readonly ShownMessage[], result: TraceEventOf<'tool_result'>): boolean {
  const raw = outputStart(result.result);
  const escaped = JSON.stringify(raw).slice(1, -1);
  const twice = JSON.stringify(escaped).slice(1, -1);
  return messages.some((m) => {
    const text = textOf(m);
    const answers =
      m.tool_call_id === result.call_id || (m.role === 'user' && text.includes(`(${result.call_id})`));
    return answers && (text.includes(raw) || text.includes(escaped) || text.includes(twice));
  });
}

/**
 * `context_overflow`: what the model was shown at a step (the recorded request) no longer
 * holds the task's goal, or no longer holds the latest tool result — a truncating context
 * policy cut it, so the agent decides without its task or without what it just did. One
 * warning at the first step each is lost. Agents that record no request are not judged.
 */
export function checkContextOverflow(input: QaInput): Flag[] {
  const goal = input.task.goal.trim();
  const flags: Flag[] = [];
  let latest: TraceEventOf<'tool_result'> | null = null;
  let goalLost = false;
  let resultLost = false;
  for (const e of input.events) {
    if (e.type === 'tool_result') latest = e;
    if (e.type !== 'model_request') continue;
    const messages = shownMessages(e.request);
    if (!messages) continue;
    const chars = messages.reduce((n, m) => n + textOf(m).length, 0);
    if (!goalLost && !messages.some((m) => textOf(m).includes(goal))) {
      goalLost = true;
      flags.push(
        flag(
          'context_overflow',
          e.step,
          'warning',
          `the goal is no longer in what the model was shown at step ${e.step} (${messages.length} message${messages.length === 1 ? '' : 's'}, ${chars} characters): the context was cut`,
          { lost: 'goal', goal: goal.slice(0, 200), messages: messages.length, chars },
        ),
      );
    }
    if (!resultLost && latest && latest.step < e.step && !resultShown(messages, latest)) {
      resultLost = true;
      flags.push(
        flag(
          'context_overflow',
          e.step,
          'warning',
          `the result of step ${latest.step} (${latest.name}) is not in what the model was shown at step ${e.step}`,
          {
            lost: 'latest_result',
            result_step: latest.step,
            call_id: latest.call_id,
            messages: messages.length,
            chars,
          },
        ),
      );
    }
  }
  return flags;
}
