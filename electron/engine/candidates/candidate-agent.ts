import type { Agent, DecideInput, Decision } from '../agents/agent.js';
import { rawOf } from '../agents/scripted-agent.js';

/** An assistant message a person typed or a candidate file holds. */
export interface CandidateMessage {
  readonly content: string | null;
  readonly tool_calls?: unknown;
}

/**
 * The agent of a candidate fork: its first decision is the candidate message; after it
 * the branch's own agent continues (a run-on, or the episode once the candidate is
 * picked). A scripted or replay agent's line for that step is consumed unread, so the
 * script stays aligned with the step numbers.
 */
export function candidateAgent(message: CandidateMessage, then: Agent): Agent {
  let used = false;
  const consumed = (then as { consumed?: () => number }).consumed;
  return {
    spec: then.spec,
    kind: then.kind,
    describe: () => then.describe(),
    ...(consumed ? { consumed: () => consumed.call(then) } : {}),
    async decide(input: DecideInput): Promise<Decision> {
      if (used) return then.decide(input);
      used = true;
      if (then.kind === 'scripted' || then.kind === 'replay') {
        // The script's own answer for this step is replaced; a script that ran out is no error here.
        await then.decide(input).catch(() => undefined);
      }
      return { raw: rawOf(message), message: { ...message, content: message.content ?? null } };
    },
  } as Agent;
}

/**
 * The agent of a model candidate asked with its own seed: `seeded` (the branch's agent
 * with the candidate's seed) decides step K+1 only; after it the branch's own agent
 * `then`, at its recorded seed, continues (a run-on, or the episode once picked).
 */
export function seededCandidateAgent(seeded: Agent, then: Agent): Agent {
  let used = false;
  return {
    spec: then.spec,
    kind: then.kind,
    describe: () => then.describe(),
    async decide(input: DecideInput): Promise<Decision> {
      if (used) return then.decide(input);
      used = true;
      try {
        return await seeded.decide(input);
      } finally {
        await seeded.dispose?.('candidate_decided');
      }
    },
    dispose: (reason: string) => then.dispose?.(reason),
  } as Agent;
}
