import { AGENT_FIELD } from './start-paths.js';

/**
 * Why a start has no agent: the task names none of its own and the Agent field is empty. The
 * server refuses such a start in these words, and a project's card greys its Start with them
 * (a project never names an agent of its own).
 */
export const NO_AGENT = `${AGENT_FIELD}: this task names no agent of its own: type one in Agent (e.g. manual, scripted:FILE or openai:MODEL)`;

/**
 * Why the oracle cannot run on a task: it runs the task's solution/solve.sh, and `where` (e.g.
 * "FOLDER has none") says there is none. `lead` names the agent as the reader gave it
 * (`--agent oracle` in the CLI, `Agent: oracle` in the window).
 */
export function noSolutionWords(lead: string, where: string): string {
  return `${lead} runs a Harbor task's solution/solve.sh, and ${where}; add solution/solve.sh to the task's folder or pick another agent`;
}
