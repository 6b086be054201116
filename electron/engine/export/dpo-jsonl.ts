import { canonicalJson } from '../../../shared/jcs.js';
import type { Task } from '../../../shared/task.js';
import type { TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ChatMessage } from '../agents/agent.js';
import { driverOf } from '../agents/agent-driver.js';
import { assistantMessage } from '../harness/conversation.js';
import { labelledConversation } from './labelled-conversation.js';
import type { FineTuneMessage } from './openai-jsonl.js';
import { personCorrected } from './person-correction.js';
import { taskTools } from './task-tools.js';

/** One line of OpenAI's preference fine-tuning format. */
export interface PreferenceRecord {
  readonly input: { messages: FineTuneMessage[]; tools: OpenAiTool[]; parallel_tool_calls: boolean };
  readonly preferred_output: FineTuneMessage[];
  readonly non_preferred_output: FineTuneMessage[];
}

/**
 * A branch as the pair builder needs it, header first: a parent or a candidate with its
 * ancestry (the input is built from them), a corrected fork with its own events only.
 */
export interface PairBranch {
  readonly branch: string;
  readonly parentBranch: string | null;
  readonly forkStep: number | null;
  readonly events: readonly TraceEvent[];
}

/** Why a pair was made: a person chose among candidates, or a person corrected a fork. */
export type PreferenceReason = 'choice' | 'corrected';

/** A pair and where it came from: the step K+1 both sides decided, and why one is preferred. */
export interface PreferencePair {
  readonly record: PreferenceRecord;
  readonly reason: PreferenceReason;
  readonly step: number;
  /** The branch whose decision is preferred, and the one whose decision is not. */
  readonly preferred: string;
  readonly rejected: string;
  /** In plain words, why this pair exists. */
  readonly why: string;
}

function outputAt(events: readonly TraceEvent[], step: number): TraceEventOf<'model_output'> | null {
  // After an in-step rollback the step's last output is the one that stands.
  let found: TraceEventOf<'model_output'> | null = null;
  for (const e of events) if (e.type === 'model_output' && e.step === step) found = e;
  return found;
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

/** The decision an output makes, call ids left out: two outputs with the same key are the same side. */
function decisionKey(out: readonly FineTuneMessage[]): string {
  return canonicalJson(
    out.map((m) => ({
      content: (m.content ?? '').trim(),
      calls: (m.tool_calls ?? []).map((c) => {
        let args: unknown = c.function.arguments;
        try {
          args = JSON.parse(c.function.arguments);
        } catch {
          // Not JSON: compared as written.
        }
        return [c.function.name, args];
      }),
    })),
  );
}

/**
 * The conversation the agent saw before `output`, with person-made messages named. Cut at
 * the output's place in `events`, not at its seq: a lineage joins several traces whose
 * seqs each start at 0, so a fork's early seq would cut the ancestry to the first messages.
 */
function inputBefore(
  task: Task,
  events: readonly TraceEvent[],
  output: TraceEventOf<'model_output'>,
): FineTuneMessage[] {
  const at = events.indexOf(output);
  const conv =
    at >= 0
      ? labelledConversation(task, events.slice(0, at))
      : labelledConversation(task, events, output.seq);
  return conv.messages.map((m, i) => {
    const origin = conv.origin.get(i);
    return {
      role: m.role,
      content: m.content,
      ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
      ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
      ...(origin && (m.role === 'user' || m.role === 'system') ? { name: origin } : {}),
    };
  });
}

/** A record from a context and two outputs; null when both sides make the same decision. */
function record(
  task: Task,
  context: readonly TraceEvent[],
  contextOut: TraceEventOf<'model_output'>,
  good: TraceEventOf<'model_output'>,
  bad: TraceEventOf<'model_output'>,
): PreferenceRecord | null {
  const [preferred, non] = [asOutput(good), asOutput(bad)];
  if (decisionKey(preferred) === decisionKey(non)) return null;
  return {
    input: {
      messages: inputBefore(task, context, contextOut),
      tools: taskTools(task),
      parallel_tool_calls: false,
    },
    preferred_output: preferred,
    non_preferred_output: non,
  };
}

/** True when a branch is a fork (not a resumed continuation of an interrupted branch, nor a candidate). */
export function isFork(header: TraceEvent | undefined): boolean {
  if (header?.type !== 'header') return false;
  return header.resume_of === undefined && header.candidate === undefined;
}

/**
 * The pair of a corrected fork at step K: a person shaped the fork's step K+1 (a manual
 * agent, or an injection, an override or an editing terminal command before it — a
 * read-only peek is none) and it decided differently from the parent's step K+1. The
 * input is what the parent's agent saw; the fork's decision is preferred. Null otherwise,
 * and for resumed branches and candidates (those are no forks of a person's making).
 */
export function correctionPair(task: Task, parent: PairBranch, fork: PairBranch): PreferencePair | null {
  const header = fork.events[0];
  if (fork.forkStep === null || !isFork(header)) return null;
  const step = fork.forkStep + 1;
  const parentOut = outputAt(parent.events, step);
  const forkOut = outputAt(fork.events, step);
  if (!parentOut || !forkOut) return null;
  const manual = header?.type === 'header' && driverOf(header.agent.kind).decides === 'person';
  if (!manual && !personCorrected(fork.events, forkOut.seq)) return null;
  const rec = record(task, parent.events, parentOut, forkOut, parentOut);
  if (!rec) return null;
  return {
    record: rec,
    reason: 'corrected',
    step,
    preferred: fork.branch,
    rejected: parent.branch,
    why: manual
      ? `a person decided step ${step} of fork ${fork.branch} (manual agent) instead of ${parent.branch}'s decision`
      : `a person corrected fork ${fork.branch} before step ${step} and its agent then decided differently from ${parent.branch}`,
  };
}

/**
 * The pair of a choice among candidates at step K: the chosen candidate's step K+1 is
 * preferred over a rejected one's that decided differently (the first such, in candidate
 * order); the input is what every candidate saw. Null when every rejected candidate
 * decided the same as the chosen one.
 */
export function choicePair(
  task: Task,
  step: number,
  chosen: PairBranch,
  rejected: readonly PairBranch[],
): PreferencePair | null {
  const good = outputAt(chosen.events, step + 1);
  if (!good) return null;
  for (const r of rejected) {
    const bad = outputAt(r.events, step + 1);
    if (!bad) continue;
    const rec = record(task, chosen.events, good, good, bad);
    if (rec)
      return {
        record: rec,
        reason: 'choice',
        step: step + 1,
        preferred: chosen.branch,
        rejected: r.branch,
        why: `a person chose candidate ${chosen.branch} over ${r.branch} after step ${step}`,
      };
  }
  return null;
}
