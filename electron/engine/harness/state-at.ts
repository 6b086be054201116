import type { Task } from '../../../shared/task.js';
import type { HeaderEvent, TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import { widerThanDefaults, type WideningKind } from '../../../shared/isolation-policy.js';
import { Conversation } from './conversation.js';
import type { Sandbox, SandboxSupply } from '../sandbox/sandbox.js';
import type { Agent } from '../agents/agent.js';
import { driverOf } from '../agents/agent-driver.js';
import { cutAtStep, lastSnapshot, readLineage, snapshotAt, type Lineage } from '../trace/lineage.js';
import type { BranchInfo, EpisodeStore } from '../trace/trace-store.js';
import { HarnessError } from './harness-error.js';
import { agentSandboxConfig } from './agent-sandbox.js';
import { recordedTask } from './recorded-task.js';
import { restoreSandbox } from './restore-sandbox.js';

/**
 * A recorded branch at step K: everything a branch (fork, resume, open), a staged
 * candidate, a what-if or a replay starts from. The one reader of it, so every path that
 * starts a sandbox from a recorded task reads the task through the recorded-task policy.
 */
export interface StateAt {
  readonly info: BranchInfo;
  readonly lineage: Lineage;
  readonly header: HeaderEvent;
  /** The recorded task, read through the recorded-task policy (consent checked). */
  readonly task: Task;
  /** The widenings of the task the user consented to (recorded on a branch made from it). */
  readonly consented: readonly WideningKind[];
  readonly step: number;
  /** Snapshot K (the workspace and shell session after step K). */
  readonly snapshot: TraceEventOf<'snapshot'>;
  /** The lineage's events up to and including step K. */
  readonly events: readonly TraceEvent[];
  /** The agent's memory after step K. */
  readonly memory: Record<string, unknown>;
}

/**
 * The state of branch `id` at step `at` (default: its last complete step). Throws
 * `invalid_task` / `consent_required` (recordedTask) before anything is started, and
 * `not_found` when step `at` has no snapshot.
 */
export function stateAt(
  store: EpisodeStore,
  id: string,
  at: number | undefined,
  consent: readonly WideningKind[] = [],
): StateAt {
  const info = store.resolve(id);
  const lineage = readLineage(store, info);
  const header = lineage.trace.header;
  const task = recordedTask(header.task, info.branch, consent);
  const last = lastSnapshot(lineage.events);
  const step = at ?? last?.step ?? 0;
  const snapshot = snapshotAt(lineage.events, step);
  if (!snapshot) {
    throw new HarnessError(
      'not_found',
      `${info.branch} has no complete step ${step}; steps 0..${last?.step ?? 0} can be opened`,
    );
  }
  const events = cutAtStep(lineage.events, step);
  const asked = new Set(widerThanDefaults(task.sandbox).map((w) => w.kind));
  return {
    info,
    lineage,
    header,
    task,
    consented: consent.filter((k) => asked.has(k)),
    step,
    snapshot,
    events,
    memory: memoryFromEvents(task, events),
  };
}

/**
 * A sandbox holding `state`'s snapshot, from `supply` (the one supply every path takes
 * its sandboxes from); released back to it if the restore fails. The pool refills once
 * the workspace is in place, not during its restore.
 */
export async function sandboxAt(
  store: EpisodeStore,
  state: StateAt,
  supply: SandboxSupply,
  /** The agent that continues: one inside the sandbox gets its files, and snapshot 0 (it re-runs 1..K). */
  agent?: Agent,
): Promise<Sandbox> {
  const resume = supply.holdRefills?.() ?? (() => undefined);
  const sandbox = await supply.acquire(agentSandboxConfig(state.task, agent)).catch((e: unknown) => {
    resume();
    throw e;
  });
  try {
    // A recycled sandbox may hold a verifier runner started for its last episode: a branch of
    // a task without a verifier lets it go, as a new episode does (SandboxEnvironment.reset).
    if (!state.task.verifier) await sandbox.dropVerifier?.();
    const rerun = agent !== undefined && driverOf(agent.kind).rewind === 'rerun';
    const start = rerun ? snapshotAt(state.lineage.events, 0) : state.snapshot;
    if (!start) throw new HarnessError('not_found', `${state.info.branch} has no snapshot of step 0`);
    await restoreSandbox(sandbox, store.snapshots(state.info.episode), start).finally(resume);
    return sandbox;
  } catch (e) {
    await supply.release(sandbox);
    throw e;
  }
}

/** The agent's memory after `events`: the task's initial values with every memory_write replayed. */
export function memoryFromEvents(task: Task, events: readonly TraceEvent[]): Record<string, unknown> {
  const memory: Record<string, unknown> = structuredClone(task.memory.initial);
  for (const e of events) if (e.type === 'memory_write') memory[e.key] = structuredClone(e.after);
  return memory;
}

/** The conversation after `events`. */
export function conversationFromEvents(task: Task, events: readonly TraceEvent[]): Conversation {
  const c = new Conversation(task);
  for (const e of events) c.apply(e);
  return c;
}
