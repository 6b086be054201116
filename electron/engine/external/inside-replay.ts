import { checkRecordedCommand, type EpisodeEnv } from '../harness/episode-factory.js';
import { HarnessError } from '../harness/harness-error.js';
import { OverlaySnapshotStore } from '../harness/overlay-snapshot-store.js';
import { sandboxAt, stateAt } from '../harness/state-at.js';
import { SandboxAgent } from './sandbox-agent.js';

/** One re-run step of an agent inside the sandbox: its outputs and workspace as recorded, or drifted. */
export interface InsideStepVerdict {
  readonly step: number;
  readonly verdict: 'match' | 'drift';
  /** The calls whose output differs (recorded → re-run). */
  readonly drift?: readonly { call_id: string; name: string; recorded: string; actual: string }[];
  /** False when the workspace after the step differs from snapshot `step` (tree hashes). */
  readonly workspace_match: boolean;
}

/** What re-running an agent inside the sandbox against its recording found. */
export interface InsideReplayReport {
  readonly steps: number;
  readonly verdicts: readonly InsideStepVerdict[];
  /** Steps whose tool outputs or workspace differ (the branch would go on). */
  readonly drifted: readonly number[];
  /** The first step whose request the recording cannot answer, or null. */
  readonly diverged_at: number | null;
  readonly diff: Record<string, unknown> | null;
}

/**
 * `replay --verify` of an episode run by an agent inside the sandbox (sandbox:, recipes):
 * snapshot 0 in a fresh sandbox, the agent started again and answered from the recording
 * while it re-runs its own tools; each step's tool outputs and workspace compared with the
 * recording (drift), and a request the recording cannot answer reported as divergence.
 */
export async function replayInsideAgent(
  options: EpisodeEnv & { readonly id: string; readonly agentSpec?: string },
): Promise<InsideReplayReport> {
  const store = options.store;
  // Step 0 through the recorded-task policy (consent checked) like every other replay, so a
  // recorded task never widens the sandbox without the user's flag; the agent re-runs from 0.
  const state = stateAt(store, options.id, 0, options.consent);
  const { info, lineage, header, task } = state;
  if (header.agent.kind !== 'sandbox')
    throw new HarnessError('invalid_input', `${info.branch} was not run by an agent inside the sandbox`);
  checkRecordedCommand(store, info.episode, header.agent, options.agentSpec);
  const spec = options.agentSpec ?? String(header.agent.spec);
  const agentDir =
    typeof header.agent.agent_dir === 'string' && !header.agent.recipe ? header.agent.agent_dir : undefined;
  // The model source is never asked: every answer comes from the recording.
  const made = options.parts.agent(spec, { model: 'manual', ...(agentDir ? { agentDir } : {}) });
  if (!(made instanceof SandboxAgent))
    throw new HarnessError(
      'invalid_input',
      `--agent ${spec}: give the sandbox: agent the branch was run with`,
    );
  const recordedModel = typeof header.agent.model === 'string' ? header.agent.model : undefined;
  const agent = new SandboxAgent(made.spec, made.launchSpec, made.source, recordedModel);
  const steps = Math.max(0, ...lineage.events.filter((e) => e.type === 'model_output').map((e) => e.step));
  const snapshots = new OverlaySnapshotStore(store.snapshots(info.episode));
  const sandbox = await sandboxAt(store, state, options.supply, agent);
  try {
    const found = await agent.verifyAgainst(
      {
        episode: info.episode,
        task,
        taskPath: header.task_path ?? null,
        history: lineage.events,
        episodeLeftMs: task.timeouts.episode * 1000,
        sandbox,
        snapshots,
      },
      steps,
    );
    const byStep = new Map(found.drift.map((d) => [d.step, d as unknown as Record<string, unknown>]));
    const verdicts: InsideStepVerdict[] = [];
    const last = found.divergence ? Number(found.divergence.diverged_at) - 1 : steps;
    for (let k = 1; k <= last; k++) {
      const d = byStep.get(k);
      const drift = (d?.drift as InsideStepVerdict['drift']) ?? [];
      verdicts.push({
        step: k,
        verdict: d ? 'drift' : 'match',
        ...(drift.length ? { drift } : {}),
        workspace_match: !d?.tree_hash,
      });
    }
    return {
      steps,
      verdicts,
      drifted: verdicts.filter((v) => v.verdict === 'drift').map((v) => v.step),
      diverged_at: found.divergence ? Number(found.divergence.diverged_at) : null,
      diff: found.divergence,
    };
  } finally {
    await options.supply.release(sandbox);
  }
}
