import type { Project, TaskSummary } from '../../../../shared/contract/models';
import { NO_AGENT, noSolutionWords } from '../../../../shared/agent-words';
import { AGENT_FIELD } from '../../../../shared/start-paths';

/** The start the agent fields hold the agent of (see `EpisodesState.agentOf`), or null. */
export type AgentOf = { readonly key: string; readonly name: string } | null;

/**
 * What a project's card says of the Agent field's agent: `runs` with it, or `why` it does not
 * (no agent typed: a project names none of its own; the fields hold another start's agent while
 * its episode is on screen; the oracle on a project without solution/solve.sh). `refusal`: the
 * words the server's start would refuse it with, so the card greys its Start with `why` beside
 * it rather than let a click find out. The card said "with oracle", or the last project's
 * script, under every project; and a Start with the field empty looked startable.
 */
export function selectProjectAgent(
  project: Project,
  agent: string,
  agentOf: AgentOf = null,
): { readonly runs: string | null; readonly why: string | null; readonly refusal: string | null } {
  const spec = agent.trim();
  if (!spec) return { runs: null, why: 'no agent yet: type one in Agent, above', refusal: NO_AGENT };
  if (heldForAnother(project.path, agentOf))
    return {
      runs: null,
      why: `no agent yet: Agent holds ${agentOf.name}’s; type or choose one`,
      refusal: `${AGENT_FIELD}: it holds the agent ${agentOf.name} started with; type or choose the one for ${project.name} (nothing carries from one project to another)`,
    };
  if (spec === 'oracle' && project.oracle === false)
    return {
      runs: null,
      why: 'not with oracle: it has no solution/solve.sh to run',
      refusal: noSolutionWords(`${AGENT_FIELD}: oracle`, `${project.name} has none`),
    };
  return { runs: spec, why: null, refusal: null };
}

/**
 * The agent a sample task's ▶ starts with: the Agent field's (`spec`), or the task's own
 * (`spec` null) when the field is empty or holds the agent another start began with while its
 * episode is on screen; `own` then says so on the card. A sample ships its own agent, so it runs
 * that rather than a project's script it was never written for (walk 12: a project's
 * `scripted:…` ran on hello-python's ▶).
 */
export function selectTaskAgent(
  task: Pick<TaskSummary, 'id'>,
  agent: string,
  agentOf: AgentOf = null,
): { readonly spec: string | null; readonly own: string | null } {
  const spec = agent.trim();
  if (!spec) return { spec: null, own: null };
  if (heldForAnother(task.id, agentOf))
    return { spec: null, own: `runs the task’s own agent: Agent holds ${agentOf.name}’s` };
  return { spec, own: null };
}

/** True when the agent fields hold the agent of a start other than `key`. */
function heldForAnother(key: string, agentOf: AgentOf): agentOf is NonNullable<AgentOf> {
  return agentOf !== null && agentOf.key !== key;
}
