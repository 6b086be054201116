import type { Breakpoint } from '../../../shared/breakpoints.js';
import { runsInSandboxSpec } from '../../../shared/agent-kind.js';
import type { Task } from '../../../shared/task.js';
import type { HeaderEvent } from '../../../shared/trace-events.js';
import type { Agent } from '../agents/agent.js';
import { driverOf } from '../agents/agent-driver.js';
import { oracleProblem } from '../agents/oracle-agent.js';
import {
  continuationOptions,
  normalizeAgentSpec,
  runsOwnProgram,
  type CallerAgentOptions,
} from '../agents/agent-spec.js';
import type { EpisodeParts } from '../episode-parts.js';
import { agentSandboxConfig } from './agent-sandbox.js';
import type { Sandbox, SandboxSupply } from '../sandbox/sandbox.js';
import { createMemory } from '../tools/memory.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import { EpisodeRunner } from './episode-runner.js';
import { HarnessError } from './harness-error.js';
import { readLineage, type Lineage } from '../trace/lineage.js';
import { sandboxAt, stateAt } from './state-at.js';
import { ALL_WIDENINGS, type WideningKind } from '../../../shared/isolation-policy.js';
import { withoutBuild, type ImageProgress, type TaskImages } from './task-images.js';

/** Options shared by every factory: what `openEngine` composes (engine/open-engine.ts). */
export interface EpisodeEnv {
  readonly store: EpisodeStore;
  /** How the episode gets its tool registry and agents. */
  readonly parts: EpisodeParts;
  /** Where the episode's sandbox comes from and goes back to when it is disposed. */
  readonly supply: SandboxSupply;
  readonly breakpoints?: readonly Breakpoint[];
  /** Agent settings: base URL, temperature, seed, retries. */
  readonly agentOptions?: CallerAgentOptions;
  /**
   * What the user consented to a recorded task widening (network, image, limits); without
   * it a recorded task wider than the defaults is refused (`consent_required`).
   */
  readonly consent?: readonly WideningKind[];
  /** Builds the image of a task that names a Dockerfile (`sandbox.build`); without it such a task is refused. */
  readonly images?: TaskImages;
  /** Each line of an image build's progress (the CLI's stderr, the window's event). */
  readonly onImageProgress?: (p: ImageProgress) => void;
}

/** Options of {@link startEpisode}. */
export interface StartEpisodeOptions extends EpisodeEnv {
  readonly task: Task;
  readonly taskPath?: string | null;
  /**
   * What of the world stepbox left out (load-world.ts `World.warnings`), recorded in the header
   * as `world_warnings` so step 0 says them wherever the episode is opened.
   */
  readonly worldWarnings?: readonly string[];
  /** `scripted:FILE`, `replay:EPISODE`, `openai:MODEL` or `manual`. */
  readonly agentSpec: string;
  /** The episode's id, allocated (`store.newEpisodeId()`) and recorded by the caller beforehand; default a fresh one. */
  readonly episodeId?: string;
  /**
   * Aborted while the sandbox is being acquired: the episode is never created (the sandbox
   * goes back) and this throws `cancelled`. Once created, stopping it is the caller's.
   */
  readonly signal?: AbortSignal;
}

/** Options of {@link openBranchController}. */
export interface OpenBranchOptions extends EpisodeEnv {
  /** Episode or branch id (or a unique prefix). */
  readonly id: string;
  /** The step to open at (default: the last complete step). */
  readonly at?: number;
  /** The agent that continues; default: the branch's own agent, past the decisions already made. */
  readonly agentSpec?: string;
  /** Create the new branch now (fork, resume) rather than at the first step (open to look around). */
  readonly branchNow?: boolean;
  /** Extra header fields of the new branch (resume sets `resume_of`). */
  readonly headerExtra?: Record<string, unknown>;
}

/** An agent factory bound to a store (for `replay:`) and the caller's settings. */
function agentFactory(store: EpisodeStore, env: EpisodeEnv): (spec: string, skip: number) => Agent {
  return (spec, skip) =>
    env.parts.agent(spec, {
      ...env.agentOptions,
      skip,
      loadEpisode: (id) => readLineage(store, store.resolve(id)).events,
    });
}

/**
 * The header field recording that this branch's sandbox ran where its limits do not hold
 * (rootless on cgroup v1), which only the user's explicit `STEPBOX_ALLOW_UNENFORCED_LIMITS=1`
 * allows: like a widened permission, the episode says so.
 */
function waivedLimits(sandbox: Sandbox): { unenforced_limits?: string } {
  return sandbox.unenforcedLimits ? { unenforced_limits: sandbox.unenforcedLimits } : {};
}

/**
 * Starts a new episode: creates the sandbox, records the header and snapshot 0, and
 * returns its controller, idle before step 1. The caller steps or runs it and disposes it.
 */
export async function startEpisode(given: StartEpisodeOptions): Promise<EpisodeRunner> {
  const options = { ...given, task: await taskWithImage(given) };
  const store = options.store;
  const makeAgent = agentFactory(store, options);
  const agent = makeAgent(normalizeAgentSpec(options.agentSpec), 0);
  const sandbox = await options.supply.acquire(agentSandboxConfig(options.task, agent));
  try {
    if (options.signal?.aborted)
      throw new HarnessError('cancelled', 'stopped before the episode was created; nothing was recorded');
    const { episode, branch, writer } = store.createEpisode(
      {
        parent_branch: null,
        fork_step: null,
        task: options.task as unknown as Record<string, unknown>,
        task_path: options.taskPath ?? null,
        agent: { spec: agent.spec, kind: agent.kind, ...agent.describe() },
        image: options.task.sandbox.image,
        created: Date.now(),
        ...waivedLimits(sandbox),
        // Where the image came from, when the task built it (the recorded task names the tag alone).
        ...(given.task.sandbox.build !== undefined ? { image_build: given.task.sandbox.build } : {}),
        ...(given.worldWarnings?.length ? { world_warnings: [...given.worldWarnings] } : {}),
      },
      options.episodeId,
    );
    const memory = createMemory(options.task.memory.initial);
    const runner: EpisodeRunner = new EpisodeRunner({
      task: options.task,
      taskPath: options.taskPath ?? null,
      store,
      episode,
      branch,
      writer,
      sandbox,
      registry: options.parts.tools(options.task),
      memory,
      agent,
      makeAgent,
      image: options.task.sandbox.image,
      breakpoints: options.breakpoints,
      release: (s) => options.supply.release(s),
      // The task came from the user's own file: forking its episode keeps what it asked for.
      openFork: (from, step, spec, agentOptions) =>
        openBranchController({
          ...options,
          store,
          id: from,
          at: step,
          agentSpec: spec,
          // The fork's own settings (the Fork settings' model source, endpoint…) over the start's.
          ...(agentOptions ? { agentOptions } : {}),
          branchNow: true,
          consent: ALL_WIDENINGS,
        }),
    });
    await runner.reset();
    return runner;
  } catch (e) {
    await options.supply.release(sandbox);
    throw e;
  }
}

/**
 * The task of a new episode with its `sandbox.build` made into its image (built, or found
 * cached) and that image in the engine (pulled, with progress, when it lacks it): the
 * header records the built tag alone, so a branch or case of it never builds.
 */
async function taskWithImage(options: StartEpisodeOptions): Promise<Task> {
  if (options.task.sandbox.build === undefined && !options.images) return options.task;
  if (!options.images)
    throw new HarnessError(
      'invalid_task',
      'this task builds its image (sandbox.build) but this engine cannot build images; run it on Docker',
    );
  return withoutBuild(
    await options.images.resolve(
      options.task,
      options.taskPath ?? null,
      options.onImageProgress ?? (() => undefined),
    ),
  );
}

/**
 * Opens a recorded branch at step K in a fresh sandbox: snapshot K restored (never
 * re-executed), memory and conversation rebuilt from the trace, the session's cwd and
 * environment as recorded. Stepping from there continues on a new branch forked at K
 * (created at once with `branchNow`). Without `agentSpec` the branch's own agent
 * continues; a scripted or replay agent skips the decisions steps 1..K used.
 */
export async function openBranchController(options: OpenBranchOptions): Promise<EpisodeRunner> {
  const store = options.store;
  const state = stateAt(store, options.id, options.at, options.consent);
  const { info, lineage, header, task, step: at, events } = state;
  // The agent that had decided step `at`: this branch's, or (before its fork point) the
  // ancestor's that ran that step, with the decisions it had made by then.
  const origin = agentAt(lineage, at);
  checkRecordedCommand(store, info.episode, origin.agent, options.agentSpec);
  // The oracle that has yet to run its one step, on a task without a solution: refused before a sandbox starts.
  const noSolution = branchOracleProblem(lineage, at, options.agentSpec, 'Agent oracle');
  if (noSolution) throw new HarnessError('invalid_input', noSolution);
  const spec = options.agentSpec ? normalizeAgentSpec(options.agentSpec) : String(origin.agent.spec);
  // A recorded openai: episode continues at its recorded endpoint and parameters, never a default one;
  // an exec: one keeps its recorded model source unless --model names another.
  const execOptions = withRecordedModel(options, origin.agent);
  const agentOptions = continuationOptions(spec, origin.agent, execOptions.agentOptions);
  const makeAgent = agentFactory(store, { ...options, agentOptions });
  const agent = makeAgent(
    spec,
    runsOwnProgram(spec)
      ? execSkip(spec, options, origin.agent, () => origin.skip)
      : options.agentSpec
        ? 0
        : origin.skip,
  );
  const sandbox = await sandboxAt(store, state, options.supply, agent);
  try {
    // What the user consented to the recorded task widening is recorded on the branch it made.
    const consented = state.consented.length > 0 ? { consented: [...state.consented] } : {};
    const headerExtra = { ...consented, ...waivedLimits(sandbox), ...(options.headerExtra ?? {}) };
    const headerFields = {
      parent_branch: info.branch,
      fork_step: at,
      task: task as unknown as Record<string, unknown>,
      task_path: header.task_path ?? null,
      agent: { spec: agent.spec, kind: agent.kind, ...agent.describe() },
      image: task.sandbox.image,
      created: Date.now(),
      ...headerExtra,
    };
    const created = options.branchNow
      ? store.createBranch(info.episode, info.branch, at, headerFields)
      : null;
    const runner: EpisodeRunner = new EpisodeRunner({
      task,
      taskPath: header.task_path ?? null,
      store,
      episode: info.episode,
      branch: created?.branch ?? info.branch,
      writer: created?.writer ?? null,
      sandbox,
      registry: options.parts.tools(task),
      memory: createMemory(state.memory),
      agent,
      makeAgent,
      image: task.sandbox.image,
      inherited: events,
      startStep: at,
      breakpoints: options.breakpoints,
      release: (s) => options.supply.release(s),
      headerExtra,
      openFork: (from, step, spec) =>
        openBranchController({ ...options, store, id: from, at: step, agentSpec: spec, branchNow: true }),
    });
    return runner;
  } catch (e) {
    await options.supply.release(sandbox);
    throw e;
  }
}

/**
 * A recorded exec: command runs again without being given only for an episode recorded
 * here: one imported from a bundle could carry any command, so continuing it needs
 * `--agent` (the window's start form) with the command the person means to run.
 */
export function checkRecordedCommand(
  store: EpisodeStore,
  episode: string,
  recorded: { spec: string; kind: string },
  given: string | undefined,
): void {
  if (!driverOf(recorded.kind).runsRecordedCommand || given || !store.imported(episode)) return;
  throw new HarnessError(
    'invalid_input',
    `this episode was imported and recorded with ${recorded.spec}; stepbox never runs a command from a bundle by itself: give the agent again, e.g. --agent '${recorded.spec}'`,
  );
}

/** An exec agent keeps the recorded model source unless `--model` names another. */
function withRecordedModel<T extends OpenBranchOptions>(
  options: T,
  recorded: { spec: string; kind: string; [k: string]: unknown },
): T {
  if (!driverOf(recorded.kind).runsRecordedCommand) return options;
  if (options.agentSpec && !runsOwnProgram(options.agentSpec)) return options;
  const model =
    options.agentOptions?.model ??
    (typeof recorded.model_source === 'string' ? recorded.model_source : undefined);
  // A sandbox: agent (the same command or another) keeps the recorded /opt/agent files unless --agent-dir names others.
  const sameSpec = !options.agentSpec || runsInSandboxSpec(options.agentSpec);
  const agentDir =
    options.agentOptions?.agentDir ??
    (sameSpec && typeof recorded.agent_dir === 'string' && !recorded.recipe ? recorded.agent_dir : undefined);
  return {
    ...options,
    agentOptions: { ...options.agentOptions, model, ...(agentDir !== undefined ? { agentDir } : {}) },
  };
}

/**
 * Decisions an exec agent's model source skips: the recorded ones when it continues the
 * same source (none given, or the recorded one again, as a live episode's fork passes
 * its start options on), else none: another source answers from step K+1 at its start.
 */
function execSkip(
  spec: string,
  options: OpenBranchOptions,
  recorded: { kind: string; [k: string]: unknown },
  recordedSkip: () => number,
): number {
  const model = options.agentOptions?.model;
  const same = model === undefined || normalizeAgentSpec(model) === recorded.model_source;
  return runsOwnProgram(spec) && driverOf(recorded.kind).runsRecordedCommand && same ? recordedSkip() : 0;
}

/**
 * Why a branch continued at step `at` (a fork, a reopen, a resume) cannot run its agent there
 * as the oracle, or null: the oracle given, or the branch's own as it stood at that step, that
 * has yet to run its one step, on a task whose folder has no solution/solve.sh. `lead` names the
 * agent as the reader gave it (`--agent oracle`, `Agent: oracle`).
 */
export function branchOracleProblem(
  lineage: Lineage,
  at: number,
  agentSpec: string | undefined,
  lead: string,
): string | null {
  const origin = agentAt(lineage, at);
  const spec = agentSpec ?? String(origin.agent.spec);
  const decided = agentSpec !== undefined ? 0 : origin.skip;
  if (spec.trim() !== 'oracle' || decided > 0) return null;
  return oracleProblem(lineage.header.task_path ?? null, lead);
}

/**
 * The agent that had decided step `at` of a lineage, as its header records it, and the
 * decisions it had made by then: this branch's, or — when `at` is before this branch's
 * fork point — the ancestor's whose own steps include `at`, plus the steps that branch ran
 * since its own fork point. The walk follows the lineage's chain (depth-bounded and
 * loop-safe: a recorded parent chain is untrusted input).
 */
export function agentAt(lineage: Lineage, at: number): { agent: HeaderEvent['agent']; skip: number } {
  let i = 0;
  while (i < lineage.chain.length - 1 && at < (lineage.chain[i].forkStep ?? 0)) i++;
  const { header, forkStep } = lineage.chain[i];
  const skip0 = typeof header.agent.skip === 'number' ? header.agent.skip : 0;
  return { agent: header.agent, skip: Math.max(0, skip0 + (at - (forkStep ?? 0))) };
}
