import type { AgentOutputChunk } from '../engine/harness/episode-controller.js';

/** How long output waits to be joined with what follows before it crosses to the window. */
export const AGENT_OUTPUT_BATCH_MS = 16;
/** A batch is sent at once when it reaches this size. */
const AGENT_OUTPUT_BATCH_CHARS = 64 * 1024;

/**
 * Joins an exec: agent's output chunks for the window (~16 ms or 64 KiB, as terminal
 * output is batched): consecutive chunks of the same step and stream become one, in
 * order. Returns the unsubscribe, which sends what is pending first.
 */
export function batchAgentOutput(
  subscribe: (listener: (chunk: AgentOutputChunk) => void) => () => void,
  send: (chunk: AgentOutputChunk) => void,
): () => void {
  let pending: AgentOutputChunk | null = null;
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const out = pending;
    pending = null;
    if (out) send(out);
  };
  const off = subscribe((chunk) => {
    if (pending && (pending.step !== chunk.step || pending.stream !== chunk.stream)) flush();
    pending = pending
      ? { ...pending, data: pending.data + chunk.data, truncated: pending.truncated || chunk.truncated }
      : chunk;
    if (pending.data.length >= AGENT_OUTPUT_BATCH_CHARS || pending.truncated) flush();
    else timer ??= setTimeout(flush, AGENT_OUTPUT_BATCH_MS);
  });
  return () => {
    off();
    flush();
  };
}
