import type { Task } from '../../../shared/task.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { Conversation } from './conversation.js';
import { discountedReturn } from '../../../shared/rewards.js';

/** The agent's memory after `events`: the task's initial values with every memory_write replayed. */
export function memoryFromEvents(task: Task, events: readonly TraceEvent[]): Record<string, unknown> {
  const memory: Record<string, unknown> = structuredClone(task.memory.initial);
  for (const e of events) if (e.type === 'memory_write') memory[e.key] = structuredClone(e.after);
  return memory;
}

/** The conversation after `events`. */
export function conversationFromEvents(task: Task, events: readonly TraceEvent[]): Conversation {
  const c = new Conversation(task);
  for (const e of events) c.apply(e);
  return c;
}

/** The number of the last completed step in `events` (the last snapshot), 0 when none. */
export function lastCompleteStep(events: readonly TraceEvent[]): number {
  let last = 0;
  for (const e of events) if (e.type === 'snapshot') last = e.step;
  return last;
}

/**
 * The discounted return of an episode: each step's reward (`reward` events, not final),
 * the final reward folded into the last step, discounted with `gamma`.
 */
export function episodeReturn(
  events: readonly TraceEvent[],
  steps: number,
  finalTotal: number,
  gamma: number,
): number {
  const rewards: number[] = [];
  for (const e of events) if (e.type === 'reward' && !e.final) rewards[e.step - 1] = e.total;
  const perStep = Array.from({ length: steps }, (_, i) => rewards[i] ?? 0);
  if (perStep.length > 0) perStep[perStep.length - 1] += finalTotal;
  return discountedReturn(perStep, gamma);
}
