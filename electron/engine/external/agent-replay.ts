import { parseTask } from '../../../shared/task.js';
import { checkRecordedCommand } from '../harness/episode-factory.js';
import { HarnessError } from '../harness/harness-error.js';
import { readLineage } from '../trace/lineage.js';
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
}): Promise<AgentReplayReport> {
  const info = options.store.resolve(options.id);
  const lineage = readLineage(options.store, info);
  const header = lineage.trace.header;
  if (header.agent.kind !== 'exec') {
    throw new HarnessError(
      'invalid_input',
      `${info.branch} was not run by an exec: agent (its agent: ${header.agent.spec})`,
    );
  }
  checkRecordedCommand(options.store, info.episode, header.agent, options.agentSpec);
  const agentSpec = options.agentSpec ?? String(header.agent.spec);
  const parsed = parseTask(header.task, `the task recorded in ${info.branch}`);
  if (!parsed.ok) throw new HarnessError('invalid_task', parsed.error.message);
  const task = parsed.value;
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
