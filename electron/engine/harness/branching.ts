import type { Task } from '../../../shared/task.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { Agent } from '../agents/agent.js';
import type { CallerAgentOptions } from '../agents/agent-spec.js';
import { driverOf } from '../agents/agent-driver.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import type { TaskMemory } from '../tools/memory.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import { cutAtStep, droppedByCut, snapshotAt } from '../trace/lineage.js';
import type { RollbackDropped } from '../../../shared/contract/models.js';
import type { BranchRecorder } from './branch-recorder.js';
import type { SandboxEnvironment } from './environment.js';
import type { EpisodeController } from './episode-controller.js';
import { HarnessError } from './harness-error.js';
import { Listeners } from './listeners.js';
import { restoreSandbox } from './restore-sandbox.js';
import { memoryFromEvents } from './state-at.js';

/** Builds an agent from a spec; `skip` decisions already made. */
export type AgentFactory = (spec: string, skip: number) => Agent;

/** Opens another live branch at step k of this one (fresh sandbox), for `fork`. */
export type ForkOpener = (
  fromBranch: string,
  step: number,
  agentSpec?: string,
  agentOptions?: CallerAgentOptions,
) => Promise<EpisodeController>;

/** What {@link Branching} moves: the branch's store and header, and the parts a rollback restores. */
export interface BranchingOptions {
  readonly store: EpisodeStore;
  readonly episode: string;
  /** This branch, or (an episode reopened without a branch yet) the branch it was opened from. */
  readonly branch: string;
  /** The step a branch is forked at on the first step (null when a branch is open). */
  readonly pendingFork: number | null;
  readonly task: Task;
  readonly taskPath: string | null;
  readonly image: string;
  /** Extra header fields for branches this creates (e.g. `resume_of`). */
  readonly headerExtra?: Record<string, unknown>;
  readonly snapshots: SnapshotStore;
  readonly memory: TaskMemory;
  readonly env: SandboxEnvironment;
  readonly recorder: BranchRecorder;
  readonly makeAgent: AgentFactory;
  readonly openFork?: ForkOpener;
}

/** Where the loop stands when a rollback starts. */
export interface RewindFrom {
  readonly current: number;
  readonly sandbox: Sandbox | null;
  readonly agent: Agent;
  /** Decisions made past `current` and dropped (a step held at a stop inside it), not skipped again. */
  readonly dropped?: number;
}

/** What the loop takes over after a rollback. */
export interface Rewound {
  /** The agent deciding the next step (a scripted, replay or exec agent is rebuilt at the step). */
  readonly agent: Agent;
  /** The kept events: the branch's history up to the step. */
  readonly kept: readonly TraceEvent[];
  /** The branch had ended (the loop re-arms its stop signal). */
  readonly wasEnded: boolean;
  /** What of a person's the branch had after snapshot k, left behind with it. */
  readonly dropped: RollbackDropped;
}

/**
 * Which branch a live controller records into, and how it moves: a rollback restores the
 * live sandbox, memory and environment at step k and leaves a branch-off pending; the
 * next step then creates the new branch; a fork opens another controller.
 */
export class Branching {
  private branchId: string;
  private pendingAt: number | null;
  private readonly listeners = new Listeners<[string]>();

  constructor(private readonly options: BranchingOptions) {
    this.branchId = options.branch;
    this.pendingAt = options.pendingFork;
  }

  /** The branch recorded into (or, before a branch-off, the one it will fork from). */
  get branch(): string {
    return this.branchId;
  }

  /** The step the next step forks a new branch at, or null when a branch is open. */
  get pendingFork(): number | null {
    return this.pendingAt;
  }

  /** Called when continuing after a rollback moved this controller onto a new branch. */
  onBranch(listener: (branch: string) => void): () => void {
    return this.listeners.add(listener);
  }

  /** Continuing after a rollback (or in a reopened episode): a new branch forked at `step`. */
  branchOff(step: number, agent: Agent): void {
    const o = this.options;
    const parent = this.branchId;
    const created = o.store.createBranch(o.episode, parent, step, {
      parent_branch: parent,
      fork_step: step,
      task: o.task as unknown as Record<string, unknown>,
      task_path: o.taskPath,
      agent: { spec: agent.spec, kind: agent.kind, ...agent.describe() },
      image: o.image,
      created: Date.now(),
      ...(o.headerExtra ?? {}),
    });
    this.branchId = created.branch;
    o.recorder.open(created.writer);
    this.pendingAt = null;
    this.listeners.emit(created.branch);
  }

  /**
   * Restores the live sandbox, memory, conversation and environment to just after step
   * `step`; the abandoned branch is closed as a person stopped it (its trace stays whole),
   * and the next step forks a new branch there.
   */
  async rollback(step: number, from: RewindFrom): Promise<Rewound> {
    const { recorder, env } = this.options;
    if (!Number.isInteger(step) || step < 0 || step > from.current) {
      throw new HarnessError(
        'invalid_input',
        `cannot roll back to step ${step}: steps 0..${from.current} exist`,
      );
    }
    const box = from.sandbox;
    if (!box)
      throw new HarnessError('conflict', 'the sandbox is gone; reopen the episode at that step instead');
    const snap = snapshotAt(recorder.events, step);
    if (!snap) throw new HarnessError('not_found', `no snapshot of step ${step} in this branch`);
    // The agent says how it is put back (agent-driver.ts). One that re-runs (sandbox:) stops
    // first and starts again on snapshot 0: it re-runs steps 1..k itself, answered from the recording.
    const rewind = driverOf(from.agent.kind).rewind;
    if (rewind === 'rerun') await from.agent.needs.process?.dispose('rolled_back');
    const start = rewind === 'rerun' ? snapshotAt(recorder.events, 0) : snap;
    if (!start) throw new HarnessError('not_found', 'no snapshot of step 0 in this branch');
    const restored = await restoreSandbox(box, this.options.snapshots, start);
    const skip = agentSkipAt(from, step);
    const kept = cutAtStep(recorder.events, step);
    const dropped = droppedByCut(recorder.events, kept);
    this.options.memory.restore(memoryFromEvents(this.options.task, kept));
    if (recorder.isOpen() && !recorder.ended()) {
      recorder.record({
        type: 'rollback',
        step: from.current,
        source: 'human',
        to_step: step,
        reason: 'user',
        tree_hash: restored.treeHash,
      });
      await recorder.close('interrupted', `rolled_back_to_${step}`, null, 0, false);
    }
    const wasEnded = recorder.rewind(kept);
    placeEnvironment(env, kept, step);
    this.pendingAt = step;
    // Rolling back time rolls the script back too: continuing re-decides step k+1 from line k+1.
    // An exec agent restarts its process, fast-forwarded through steps 1..k from the recording;
    // an agent that decides from the conversation alone goes on as it is.
    let agent = from.agent;
    if (rewind !== 'continue') {
      if (rewind === 'rebuild') await agent.needs.process?.dispose('rolled_back');
      agent = this.options.makeAgent(agent.spec, skip);
    }
    return { agent, kept, wasEnded, dropped };
  }

  /** Opens another live branch at step `step` of this one. */
  async fork(
    step: number,
    agentSpec?: string,
    agentOptions?: CallerAgentOptions,
  ): Promise<EpisodeController> {
    if (!this.options.openFork) throw new HarnessError('conflict', 'this controller cannot open forks');
    return this.options.openFork(this.branchId, step, agentSpec, agentOptions);
  }
}

/**
 * The environment as it stood after step `step` of `events`: the repeated-action state and
 * payload ring rebuilt, and snapshot `step` as the stable one a hard timeout rolls back to.
 */
export function placeEnvironment(env: SandboxEnvironment, events: readonly TraceEvent[], step: number): void {
  env.restoreFromEvents(events);
  const snap = snapshotAt(events, step);
  if (snap)
    env.stable = {
      step: snap.step,
      manifest: snap.manifest,
      treeHash: snap.tree_hash,
      session: snap.session,
    };
}

/** Decisions the agent had made by step `step` (scripted and replay agents skip them). */
function agentSkipAt(from: RewindFrom, step: number): number {
  const consumed = from.agent.needs.position?.consumed() ?? 0;
  return Math.max(0, consumed - (from.dropped ?? 0) - (from.current - step));
}
