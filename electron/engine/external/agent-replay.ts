import type { WideningKind } from '../../../shared/isolation-policy.js';
import { checkRecordedCommand } from '../harness/episode-factory.js';
import { HarnessError } from '../harness/harness-error.js';
import { stateAt } from '../harness/state-at.js';
import type { EpisodeParts } from '../episode-parts.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import { ExecAgent, type AgentDivergence } from './exec-agent.js';

/** What re-running an exec agent against its recording found. */
export interface AgentReplayReport {
  /** The model calls replayed. */
  readonly steps: number;
  /** The first step where the agent asked something else, or null. */
  readonly agent_diverged_at: number | null;
  readonly agent_diff: AgentDivergence | null;
}

/**
 * `replay --verify` for the agent program itself: a new process of `agentSpec` is
 * answered entirely from the recording of branch `id` (model and tool calls, nothing
 * executed) and must ask exactly what was recorded, step by step.
 */
export async function replayExecAgent(options: {
  readonly store: EpisodeStore;
  readonly parts: EpisodeParts;
  readonly id: string;
  /** The exec:CMD to run; absent, the recorded one (refused for an imported episode). */
  readonly agentSpec?: string;
  /** Consent to the recorded task's widenings (the same as the replay's own). */
  readonly consent?: readonly WideningKind[];
}): Promise<AgentReplayReport> {
  // The task as every other path reads a recorded one: through the recorded-task policy.
  const { info, lineage, header, task } = stateAt(options.store, options.id, undefined, options.consent);
  if (header.agent.kind !== 'exec') {
    throw new HarnessError(
      'invalid_input',
      `${info.branch} was not run by an exec: agent (its agent: ${header.agent.spec})`,
    );
  }
  checkRecordedCommand(options.store, info.episode, header.agent, options.agentSpec);
  const agentSpec = options.agentSpec ?? String(header.agent.spec);
  // The model source is never asked: every answer comes from the recording.
  const made = options.parts.agent(agentSpec, { model: 'manual' });
  if (!(made instanceof ExecAgent)) {
    throw new HarnessError(
      'invalid_input',
      `--agent ${agentSpec}: give the exec:CMD the branch was run with`,
    );
  }
  const recordedModel = typeof header.agent.model === 'string' ? header.agent.model : undefined;
  const agent = new ExecAgent(made.spec, made.command, made.source, recordedModel);
  const steps = Math.max(0, ...lineage.events.filter((e) => e.type === 'model_output').map((e) => e.step));
  const divergence = await agent.verifyAgainst(
    {
      episode: info.episode,
      task,
      taskPath: header.task_path ?? null,
      history: lineage.events,
      episodeLeftMs: task.timeouts.episode * 1000,
    },
    options.parts.tools(task).definitions(),
    steps,
  );
  return { steps, agent_diverged_at: divergence?.diverged_at ?? null, agent_diff: divergence };
}
