import type { Agent, DecideInput, Decision } from '../agents/agent.js';

/**
 * The end reason (and error code) of a step whose agent did not decide within the step's
 * hard timeout: a hung or crawling model endpoint, retries included.
 */
export const MODEL_TIMEOUT = 'model_timeout';

/** Thrown by {@link decideWithin} when the deadline passes before the agent decides. */
export class DecisionTimeout extends Error {
  override readonly name = 'DecisionTimeout';
}

/**
 * How long the agent may take to decide a step: the hard step timeout, or what is left
 * of the episode budget when that is shorter (`by` says which binds). None for a
 * `manual` agent: a person deciding is not timed, as a paused stepper is not.
 */
export function decisionDeadline(
  agent: Agent,
  stepHardMs: number,
  episodeLeftMs: number,
): { readonly ms: number; readonly by: 'step' | 'episode' } | null {
  if (agent.kind === 'manual') return null;
  return episodeLeftMs < stepHardMs
    ? { ms: Math.max(1, episodeLeftMs), by: 'episode' }
    : { ms: stepHardMs, by: 'step' };
}

/**
 * Asks the agent for its decision, bounded by `ms` (null: unbounded). On the deadline
 * the request is aborted (the agent's signal) and this rejects with DecisionTimeout at
 * once, whether or not the agent honours the signal, so a hung endpoint cannot hold the
 * step. `stop` (the runner's stop) aborts the request too.
 */
export async function decideWithin(
  agent: Agent,
  ms: number | null,
  stop: AbortSignal,
  input: Omit<DecideInput, 'signal'>,
): Promise<Decision> {
  const abort = new AbortController();
  const onStop = () => abort.abort();
  if (stop.aborted) abort.abort();
  else stop.addEventListener('abort', onStop, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut =
    ms === null
      ? null
      : new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            abort.abort();
            reject(new DecisionTimeout(`no decision within ${ms} ms`));
          }, ms);
        });
  try {
    const decision = agent.decide({ ...input, signal: abort.signal });
    // After a timeout the abandoned request's own failure is expected; nothing waits for it.
    decision.catch(() => undefined);
    return await (timedOut ? Promise.race([decision, timedOut]) : decision);
  } finally {
    clearTimeout(timer);
    stop.removeEventListener('abort', onStop);
  }
}
