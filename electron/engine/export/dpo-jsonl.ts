import type { Task } from '../../../shared/task.js';
import type { TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ChatMessage } from '../agents/agent.js';
import { assistantMessage } from '../harness/conversation.js';
import { labelledConversation } from './labelled-conversation.js';
import type { FineTuneMessage } from './openai-jsonl.js';
import { taskTools } from './task-tools.js';

/** One line of OpenAI's preference fine-tuning format. */
export interface PreferenceRecord {
  readonly input: { messages: FineTuneMessage[]; tools: OpenAiTool[]; parallel_tool_calls: boolean };
  readonly preferred_output: FineTuneMessage[];
  readonly non_preferred_output: FineTuneMessage[];
}

/** A branch as the pair builder needs it. */
export interface PairBranch {
  readonly branch: string;
  readonly parentBranch: string | null;
  readonly forkStep: number | null;
  readonly events: readonly TraceEvent[];
  readonly quality: number;
}

/** Why a fork is preferred over its parent's continuation. */
export type PreferenceReason = 'corrected' | 'quality';

function firstOutput(events: readonly TraceEvent[], step: number): TraceEventOf<'model_output'> | null {
  return (
    events.find((e): e is TraceEventOf<'model_output'> => e.type === 'model_output' && e.step === step) ??
    null
  );
}

function asOutput(e: TraceEventOf<'model_output'>): FineTuneMessage[] {
  const m: ChatMessage = assistantMessage(
    (e.message ?? { content: e.raw }) as { content: string | null },
    e.step,
  );
  return [
    { role: 'assistant', content: m.content, ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}) },
  ];
}

/** True when a person shaped the fork's first decision: a manual agent, or an injection/override before it. */
function correctedByPerson(fork: PairBranch, firstSeq: number): boolean {
  const header = fork.events[0];
  if (header?.type === 'header' && header.agent.kind === 'manual') return true;
  return fork.events.some(
    (e) => e.seq < firstSeq && (e.type === 'injected' || e.type === 'override' || e.type === 'human_command'),
  );
}

/**
 * A preference pair from a fork at step K and its parent: the input is the conversation
 * the parent's agent saw before step K+1; the fork's step K+1 is preferred when a person
 * corrected it (a manual agent, or an injection before it), otherwise whichever branch
 * scored the higher quality wins. Null when either side has no step K+1, or neither wins.
 */
export function preferencePair(
  task: Task,
  parent: PairBranch,
  fork: PairBranch,
): { record: PreferenceRecord; reason: PreferenceReason; forkPreferred: boolean; step: number } | null {
  if (fork.forkStep === null) return null;
  const step = fork.forkStep + 1;
  const parentOut = firstOutput(parent.events, step);
  const forkOut = firstOutput(fork.events, step);
  if (!parentOut || !forkOut) return null;
  const corrected = correctedByPerson(fork, forkOut.seq);
  if (!corrected && fork.quality === parent.quality) return null;
  const forkPreferred = corrected || fork.quality > parent.quality;
  const conv = labelledConversation(task, parent.events, parentOut.seq);
  const messages: FineTuneMessage[] = conv.messages.map((m, i) => {
    const origin = conv.origin.get(i);
    return {
      role: m.role,
      content: m.content,
      ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
      ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
      ...(origin && (m.role === 'user' || m.role === 'system') ? { name: origin } : {}),
    };
  });
  const [good, bad] = forkPreferred
    ? [asOutput(forkOut), asOutput(parentOut)]
    : [asOutput(parentOut), asOutput(forkOut)];
  return {
    record: {
      input: { messages, tools: taskTools(task), parallel_tool_calls: false },
      preferred_output: good,
      non_preferred_output: bad,
    },
    reason: corrected ? 'corrected' : 'quality',
    forkPreferred,
    step,
  };
}
