import type { Agent, DecideInput, Decision } from '../agents/agent.js';
import { driverOf } from '../agents/agent-driver.js';
import { rawOf } from '../agents/scripted-agent.js';

/** An assistant message a person typed or a candidate file holds. */
export interface CandidateMessage {
  readonly content: string | null;
  readonly tool_calls?: unknown;
}

/**
 * `then`, except that its first decision is `first`'s: the agent of a candidate fork, which
 * is the branch's own agent in all else (its kind, its needs, how it describes itself).
 */
function firstDecisionThen(then: Agent, first: (input: DecideInput) => Promise<Decision>): Agent {
  let used = false;
  return {
    spec: then.spec,
    kind: then.kind,
    needs: then.needs,
    describe: () => then.describe(),
    decide(input: DecideInput): Promise<Decision> {
      if (used) return then.decide(input);
      used = true;
      return first(input);
    },
  };
}

/**
 * The agent of a candidate fork: its first decision is the candidate message; after it
 * the branch's own agent continues (a run-on, or the episode once the candidate is
 * picked). An agent whose next answer is fixed (a script line, a recorded output) has that
 * line consumed unread, so the script stays aligned with the step numbers.
 */
export function candidateAgent(message: CandidateMessage, then: Agent): Agent {
  const fixed = driverOf(then.kind).decides === 'script';
  return firstDecisionThen(then, async (input) => {
    // The script's own answer for this step is replaced; a script that ran out is no error here.
    if (fixed) await then.decide(input).catch(() => undefined);
    return { raw: rawOf(message), message: { ...message, content: message.content ?? null } };
  });
}

/**
 * The agent of a model candidate asked with its own seed: `seeded` (the branch's agent
 * with the candidate's seed) decides step K+1 only; after it the branch's own agent
 * `then`, at its recorded seed, continues (a run-on, or the episode once picked).
 */
export function seededCandidateAgent(seeded: Agent, then: Agent): Agent {
  return firstDecisionThen(then, async (input) => {
    try {
      return await seeded.decide(input);
    } finally {
      await seeded.needs.process?.dispose('candidate_decided');
    }
  });
}
