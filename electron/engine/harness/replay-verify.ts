import { runsInSandboxSpec } from '../../../shared/agent-kind.js';
import { COMPARED_FIELDS, comparedField, type ToolResult } from '../../../shared/tool-result.js';
import type { ChangedPath, TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import type { Agent, DecideContext, Reexecutes, Reexecution } from '../agents/agent.js';
import { driverOf } from '../agents/agent-driver.js';
import type { ParsedAction } from '../agents/parse-action.js';
import { diffFiles } from '../sandbox/manifest.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import { createMemory } from '../tools/memory.js';
import { shellQuote } from '../tools/shell-quote.js';
import { snapshotAt } from '../trace/lineage.js';
import { SandboxEnvironment } from './environment.js';
import { checkRecordedCommand, type EpisodeEnv } from './episode-factory.js';
import { HarnessError } from './harness-error.js';
import { MaxSteps } from './max-steps.js';
import { OverlaySnapshotStore } from './overlay-snapshot-store.js';
import {
  MAX_FILES,
  replayReport,
  type ReplayReport,
  type StepDifference,
  type StepVerdict,
} from './replay-report.js';
import { sandboxAt, stateAt, type StateAt } from './state-at.js';
import { StepTimeout } from './step-timeout.js';
import { MemorySink } from './trace-sink.js';
import { runVerifier } from './verifier.js';

/** Options of {@link replayVerify}. */
export interface ReplayOptions extends EpisodeEnv {
  /** Episode or branch id (or a unique prefix). */
  readonly id: string;
  /**
   * The agent program to re-run (exec:CMD, sandbox:CMD, a recipe); default the recorded one,
   * which is refused for an episode imported from a bundle (its command never runs by itself).
   */
  readonly agentSpec?: string;
  /** Each step's verdict as it is found (the CLI prints it). */
  readonly onStep?: (v: StepVerdict) => void;
}

/** The verifier fields of a replay that did not compare it. */
const NO_VERIFIER = { verifier_match: null, recorded_verifier: null, replayed_verifier: null } as const;

/**
 * `replay --verify`: re-executes a recorded branch from snapshot 0 in a fresh sandbox, the
 * one replay of every agent. How is its agent's to say (agent-driver.ts):
 * - `actions`: the recorded actions run again in order, human commands re-applied at their
 *   steps (injections and overrides change what the agent saw, not what ran, so the
 *   recorded actions already carry them); every tool result compared with the recording,
 *   every step's workspace tree hash apart, and the verifier run again;
 * - `program`: the agent starts again and re-runs its own tools answered from the
 *   recording (the agent's `needs.reexecution`); a tool output or workspace that differs, or a request
 *   the recording cannot answer, is what differs;
 * - `actions_and_program`: the actions, then the agent's program run again against the
 *   recording (nothing executed), which must ask what it asked.
 * The recorded task is read through the recorded-task policy (consent) and the agent is
 * made, its recorded command checked, before any sandbox exists. Nothing is written to the
 * episode.
 */
export async function replayVerify(options: ReplayOptions): Promise<ReplayReport> {
  const state = stateAt(options.store, options.id, 0, options.consent);
  const how = driverOf(state.header.agent.kind).replay;
  const program = how === 'actions' ? noProgram(options, state) : reexecutingAgent(options, state);
  const head = { episode: state.info.episode, branch: state.info.branch, replayed: how };
  if (how === 'actions' || !program) {
    const actions = await replayActions(options, state, options.onStep);
    return replayReport(head, actions.steps, actions.verifier);
  }
  if (how === 'program') {
    const sandbox = await sandboxAt(options.store, state, options.supply, program.agent);
    try {
      const snapshots = new OverlaySnapshotStore(options.store.snapshots(state.info.episode));
      const found = await reexecute(program.reexecution, options, state, { sandbox, snapshots });
      const events = state.lineage.events;
      const last = found.divergence ? found.divergence.step - 1 : recordedSteps(events);
      const base = Array.from({ length: Math.max(0, last) }, (_, i) => asRecorded(events, i + 1));
      return replayReport(head, emitted(withReexecution(base, found), options.onStep), NO_VERIFIER);
    } finally {
      await options.supply.release(sandbox);
    }
  }
  const actions = await replayActions(options, state);
  const found = await reexecute(program.reexecution, options, state, {});
  return replayReport(head, emitted(withReexecution(actions.steps, found), options.onStep), actions.verifier);
}

/** Refuses `--agent` for a branch whose recorded actions are what is replayed. */
function noProgram(options: ReplayOptions, state: StateAt): null {
  if (options.agentSpec === undefined) return null;
  throw new HarnessError(
    'invalid_input',
    `--agent re-runs an agent program of its own (exec:, sandbox:, a recipe); ${state.info.branch} was run by ${state.header.agent.spec}, whose recorded actions are what is replayed: drop --agent`,
  );
}

/**
 * The recorded agent (or the one given, of the same kind), made to be answered from the
 * recording only, and how it re-executes (its `needs.reexecution`).
 */
function reexecutingAgent(options: ReplayOptions, state: StateAt): { agent: Agent; reexecution: Reexecutes } {
  const { info, header } = state;
  checkRecordedCommand(options.store, info.episode, header.agent, options.agentSpec);
  const spec = options.agentSpec ?? String(header.agent.spec);
  // It is served the recorded model name, and never asks a model source: 'manual' stands in.
  const servedModel = typeof header.agent.model === 'string' ? header.agent.model : undefined;
  // A sandbox: agent keeps the recorded /opt/agent files (a recipe brings its own).
  const agentDir =
    runsInSandboxSpec(spec) && typeof header.agent.agent_dir === 'string' && !header.agent.recipe
      ? header.agent.agent_dir
      : undefined;
  const agent = options.parts.agent(spec, {
    model: 'manual',
    ...(servedModel !== undefined ? { servedModel } : {}),
    ...(agentDir !== undefined ? { agentDir } : {}),
  });
  const reexecution = agent.needs.reexecution;
  if (agent.kind !== header.agent.kind || !reexecution)
    throw new HarnessError(
      'invalid_input',
      `--agent ${spec}: ${info.branch} was run by ${String(header.agent.spec)}; give the ${header.agent.kind} agent it was run with`,
    );
  return { agent, reexecution };
}

/** Runs the agent's re-execution over the whole recording, in `where` (its sandbox when it runs its own tools). */
async function reexecute(
  reexecution: Reexecutes,
  options: ReplayOptions,
  state: StateAt,
  where: Pick<DecideContext, 'sandbox' | 'snapshots'>,
): Promise<Reexecution> {
  const { info, header, task, lineage } = state;
  return reexecution.reexecute(
    {
      episode: info.episode,
      task,
      taskPath: header.task_path ?? null,
      history: lineage.events,
      episodeLeftMs: task.timeouts.episode * 1000,
      ...where,
    },
    recordedSteps(lineage.events),
    options.parts.tools(task).definitions(),
  );
}

/** The steps a recording holds: its last model output's (a re-run agent is answered that far). */
function recordedSteps(events: readonly TraceEvent[]): number {
  return Math.max(0, ...events.filter((e) => e.type === 'model_output').map((e) => e.step));
}

/** Step `k` as recorded, before anything a re-run found: a match (or no calls), its workspace as recorded. */
function asRecorded(events: readonly TraceEvent[], k: number): StepVerdict {
  return {
    step: k,
    verdict: recordedAction(events, k).kind === 'calls' ? 'match' : 'no_calls',
    workspace_match: true,
  };
}

/**
 * `steps` with what a re-run agent found: a drifted step's differing outputs and workspace,
 * and the step it diverged at (a step past the recording is added).
 */
export function withReexecution(steps: readonly StepVerdict[], found: Reexecution): StepVerdict[] {
  const out = steps.map((v) => {
    const d = found.drift.find((x) => x.step === v.step);
    if (!d) return v;
    const diff: StepDifference[] = [
      ...(v.diff ?? []),
      ...d.calls.map((c) => ({
        kind: 'tool_result_differs' as const,
        call_id: c.call_id,
        name: c.name,
        field: 'output' as const,
        recorded: c.recorded,
        replayed: c.actual,
      })),
    ];
    return {
      ...v,
      ...(diff.length ? { verdict: 'diverged' as const, diff } : {}),
      workspace_match: d.workspace ? false : v.workspace_match,
    };
  });
  const div = found.divergence;
  if (!div) return out;
  const unanswerable: StepDifference = {
    kind: 'request_unanswerable',
    field: div.field,
    recorded: div.recorded,
    replayed: div.actual,
  };
  const at = out.findIndex((v) => v.step === div.step);
  if (at >= 0) out[at] = { ...out[at], verdict: 'diverged', diff: [...(out[at].diff ?? []), unanswerable] };
  else out.push({ step: div.step, verdict: 'diverged', diff: [unanswerable], workspace_match: null });
  return out.sort((a, b) => a.step - b.step);
}

/** Hands each verdict to `onStep` (found all at once), and returns them. */
function emitted(steps: StepVerdict[], onStep?: (v: StepVerdict) => void): StepVerdict[] {
  for (const v of steps) onStep?.(v);
  return steps;
}

/**
 * The recorded actions run again from snapshot 0 in a fresh sandbox (from `sandboxAt`),
 * step by step, and the verifier after them; the sandbox goes back to the supply.
 */
async function replayActions(
  options: ReplayOptions,
  state: StateAt,
  onStep?: (v: StepVerdict) => void,
): Promise<{
  steps: StepVerdict[];
  verifier: Pick<ReplayReport, 'verifier_match' | 'recorded_verifier' | 'replayed_verifier'>;
}> {
  const store = options.store;
  const { info, lineage, task, snapshot: snap0 } = state;
  const events = lineage.events;
  const snapshots = new OverlaySnapshotStore(store.snapshots(info.episode));
  const sandbox = await sandboxAt(store, state, options.supply);
  try {
    const sink = new MemorySink();
    const memory = createMemory(task.memory.initial);
    const env = new SandboxEnvironment({
      task,
      sandbox,
      registry: options.parts.tools(task),
      memory,
      snapshots,
      sink,
    });
    env.stable = { step: 0, manifest: snap0.manifest, treeHash: snap0.tree_hash, session: snap0.session };
    const stack = new StepTimeout(
      new MaxSteps(env, Infinity),
      task.timeouts.step_soft,
      task.timeouts.step_hard,
    );
    const recordedSteps = events.filter((e) => e.type === 'snapshot' && e.step > 0).map((e) => e.step);
    const steps: StepVerdict[] = [];
    for (const k of recordedSteps) {
      for (const h of events.filter(
        (e): e is TraceEventOf<'human_command'> => e.type === 'human_command' && e.step === k - 1,
      )) {
        const cd = h.cwd ? `cd ${shellQuote(h.cwd)} 2>/dev/null; ` : '';
        await sandbox.exec({
          command: `${cd}${h.command}`,
          timeoutMs: task.timeouts.step_hard * 1000,
          fresh: true,
        });
      }
      const parsed = recordedAction(events, k);
      // A result a person gave instead of running the call is given again: that tool never ran.
      const replaced = new Map(
        events
          .filter(
            (e): e is TraceEventOf<'tool_result'> =>
              e.type === 'tool_result' && e.step === k && e.replaced === true,
          )
          .map((e) => [e.call_id, e.result] as const),
      );
      const outcome = await stack.step({ step: k, parsed, ...(replaced.size > 0 ? { replaced } : {}) });
      const recorded = events.filter(
        (e): e is TraceEventOf<'tool_result'> => e.type === 'tool_result' && e.step === k,
      );
      const diff = compareResults(
        recorded,
        outcome.info.calls.map((c) => ({ id: c.call.id, name: c.call.name, result: c.result })),
      );
      const replayedSnap = [...sink.events].reverse().find((e) => e.type === 'snapshot' && e.step === k);
      const recordedSnap = snapshotAt(events, k);
      const workspaceMatch =
        replayedSnap?.type === 'snapshot' &&
        recordedSnap !== null &&
        replayedSnap.tree_hash === recordedSnap.tree_hash;
      const files = workspaceMatch
        ? []
        : await differingFiles(
            snapshots,
            recordedSnap?.manifest ?? null,
            replayedSnap?.type === 'snapshot' ? replayedSnap.manifest : null,
          );
      const verdict: StepVerdict = {
        step: k,
        verdict:
          parsed.kind !== 'calls' && diff.length === 0 ? 'no_calls' : diff.length ? 'diverged' : 'match',
        ...(diff.length ? { diff } : {}),
        workspace_match: workspaceMatch,
        ...(files.length ? { files } : {}),
      };
      steps.push(verdict);
      onStep?.(verdict);
      if (outcome.info.fatal) break;
    }
    const recordedVerifier = lineage.trace.end?.verifier ?? null;
    const endedNormally =
      lineage.trace.end !== null && ['succeeded', 'failed', 'timeout'].includes(lineage.trace.end.status);
    const replayedVerifier = endedNormally ? await runVerifier(task, sandbox) : null;
    const verifierMatch = !endedNormally
      ? null
      : recordedVerifier === null || replayedVerifier === null
        ? recordedVerifier === replayedVerifier
        : recordedVerifier.success === replayedVerifier.success &&
          recordedVerifier.exit_code === replayedVerifier.exit_code;
    return {
      steps,
      verifier: {
        verifier_match: verifierMatch,
        recorded_verifier: recordedVerifier,
        replayed_verifier: replayedVerifier,
      },
    };
  } finally {
    await options.supply.release(sandbox);
  }
}

/** The files that differ between the recorded and the replayed snapshot of a step. */
async function differingFiles(
  store: SnapshotStore,
  recorded: string | null,
  replayed: string | null,
): Promise<ChangedPath[]> {
  if (!recorded || !replayed) return [];
  const [a, b] = await Promise.all([store.getManifest(recorded), store.getManifest(replayed)]);
  return diffFiles(a, b).slice(0, MAX_FILES);
}

/** The action recorded at step k, as the environment takes it. */
function recordedAction(events: readonly TraceEvent[], k: number): ParsedAction {
  for (const e of events) {
    if (e.step !== k) continue;
    if (e.type === 'action') {
      if (e.final !== null && e.calls.length === 0) return { kind: 'final', text: e.final };
      const via = (e.via as 'tool_calls' | 'text' | undefined) ?? 'tool_calls';
      return { kind: 'calls', calls: e.calls, via };
    }
    if (e.type === 'parse_error') {
      const ids = (e.call_ids as string[] | undefined) ?? [];
      return { kind: 'parse_error', message: e.message, callIds: ids, via: 'text' };
    }
  }
  return { kind: 'parse_error', message: `no action recorded at step ${k}`, callIds: [], via: 'empty' };
}

/** Differences between recorded and replayed results, call by call, in the compared fields. */
export function compareResults(
  recorded: readonly TraceEventOf<'tool_result'>[],
  replayed: readonly { id: string; name: string; result: ToolResult }[],
): StepDifference[] {
  const diffs: StepDifference[] = [];
  if (recorded.length !== replayed.length)
    diffs.push({ kind: 'calls_differ', recorded: recorded.length, replayed: replayed.length });
  for (const r of recorded) {
    const again = replayed.find((x) => x.id === r.call_id);
    if (!again) continue;
    for (const field of COMPARED_FIELDS) {
      const a = comparedField(r.result, field);
      const b = comparedField(again.result, field);
      if (a !== b)
        diffs.push({
          kind: 'tool_result_differs',
          call_id: r.call_id,
          name: r.name,
          field,
          recorded: a,
          replayed: b,
        });
    }
  }
  return diffs;
}
