import { memoryCorruption } from '../../../shared/memory-corruption.js';
import { actionSignature, stepReward } from '../../../shared/rewards.js';
import type { Task } from '../../../shared/task.js';
import { toolFailure, type ToolResult } from '../../../shared/tool-result.js';
import type { ChangedPath, ToolCall, TraceEvent } from '../../../shared/trace-events.js';
import type { ExternalTools } from '../agents/agent.js';
import type { ParsedAction } from '../agents/parse-action.js';
import type { Sandbox, SessionState, SnapshotInfo } from '../sandbox/sandbox.js';
import { SandboxFailure } from '../sandbox/sandbox.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import type { TaskMemory } from '../tools/memory.js';
import type { ToolRegistry } from '../tools/tool-call.js';
import { fallbackResult, isHardTimeout } from './hard-timeout.js';
import type { NewTraceEvent } from '../trace/trace-store.js';
import { SnapshotTaking } from './snapshot-taking.js';
import type { TraceSink } from './trace-sink.js';
import { SetupFailure, writeWorkspace } from './workspace-setup.js';

/** Skipped paths named in the warning of a folder import (the rest are counted). */
const SKIPPED_LISTED = 50;

/** What the environment is asked to do in a step: the parsed action, plus the budget wrappers set. */
export interface StepAction {
  readonly step: number;
  readonly parsed: ParsedAction;
  /** Seq of the model_output this action answers. */
  readonly cause?: number;
  /** The raw output, kept in a parse error for the reader. */
  readonly raw?: string;
  /** The hard step timeout in ms (the step timeout wrapper sets it). */
  readonly hardMs?: number;
  /** What is left of the episode's time budget in ms (the episode timeout wrapper sets it). */
  readonly episodeLeftMs?: number;
  /** Results a person gave instead of running calls (by call id): those tools do not run. */
  readonly replaced?: ReadonlyMap<string, ToolResult>;
  /**
   * The agent runs the calls itself (an agent inside the sandbox): they are recorded, not
   * run; this resolves with what they returned. A person's result is what the agent's
   * model is shown instead (the real one is kept as `real`).
   */
  readonly external?: ExternalTools;
}

/** One call of a step and what came back. */
export interface CallRecord {
  readonly call: ToolCall;
  /** What the agent was shown (the fallback after a hard timeout). */
  readonly result: ToolResult;
  readonly hardTimeout: boolean;
}

/** Why an episode cannot go on (Contracts: a fatal error). */
export interface Fatal {
  readonly code: string;
  readonly message: string;
}

/** What a step did, beyond the observation. */
export interface StepInfo {
  readonly step: number;
  readonly calls: readonly CallRecord[];
  readonly memoryWrites: readonly { key: string; after: unknown; corruption: string | null }[];
  readonly final: string | null;
  readonly formatValid: boolean;
  readonly repeated: boolean;
  readonly reward: number;
  readonly softTimeout: boolean;
  readonly hardTimeout: boolean;
  readonly toolMs: number;
  readonly snapshotMs: number;
  readonly fsyncMs: number;
  readonly fatal?: Fatal;
  /** Set by wrappers: why the episode was cut short. */
  readonly truncation?: 'max_steps' | 'episode_timeout';
}

/** Gymnasium's step result. */
export interface StepOutcome {
  /** What the agent will see of this step (observation texts). */
  readonly observation: readonly string[];
  /** The episode reached a terminal state (a final answer, or a fatal error). */
  readonly terminated: boolean;
  /** The episode was cut short by a limit (max steps, episode timeout). */
  readonly truncated: boolean;
  readonly info: StepInfo;
}

/** The environment's side of the loop, shaped like Gymnasium's `Env`; limits are wrappers around it. */
export interface Environment {
  /** Sets up the workspace and records snapshot 0; the observation is the goal. */
  reset(): Promise<{ observation: string; info: { snapshotMs: number; fsyncMs: number } }>;
  step(action: StepAction): Promise<StepOutcome>;
  /** Records a warning the agent will see (soft step timeout). */
  warn(step: number, code: string, message: string): void;
  /** Kills what runs in the sandbox (a hard-timeout backstop, a stop). */
  abort(): Promise<void>;
}

/** A snapshot the environment can roll back to. */
export interface StableSnapshot {
  readonly step: number;
  readonly manifest: string;
  readonly treeHash: string;
  readonly session?: SessionState;
}

/** Everything the sandbox environment works with. */
export interface SandboxEnvironmentOptions {
  readonly task: Task;
  readonly sandbox: Sandbox;
  readonly registry: ToolRegistry;
  readonly memory: TaskMemory;
  readonly snapshots: SnapshotStore;
  /** The task file, when the task came from one (a `from` folder holding it leaves it out). */
  readonly taskPath?: string | null;
  sink: TraceSink;
}

/**
 * Runs actions in the sandbox: tool calls through the registry, memory writes checked by
 * the one corruption detector, step rewards, and snapshot k after step k, committed
 * (fsynced) once per step. A hard timeout shows the tool's fallback and rolls the
 * workspace back to the last stable snapshot.
 */
export class SandboxEnvironment implements Environment {
  /** The last snapshot taken or restored: what a hard timeout rolls back to. */
  stable: StableSnapshot | null = null;
  /** The snapshot being taken, with the person's commands reported meanwhile; null between snapshots. */
  private taking: SnapshotTaking | null = null;
  /** Each open terminal's commands reported and not yet recorded (see {@link awaitHumanReports}). */
  private readonly reporters = new Set<() => Promise<void> | null>();
  /** Files over the per-file cap at the last snapshot (path → size): not in its manifest, so not in its diff. */
  private uncaptured = new Map<string, number>();
  /** Signature of the previous step's calls, for the repeated-action component. */
  lastSignature: string | null = null;
  /** The last tool payloads, for a fatal error's context. */
  readonly recentPayloads: { step: number; name: string; arguments: unknown; result: ToolResult }[] = [];
  private softFired = false;

  constructor(readonly options: SandboxEnvironmentOptions) {}

  private get sink(): TraceSink {
    return this.options.sink;
  }

  async reset(): Promise<{ observation: string; info: { snapshotMs: number; fsyncMs: number } }> {
    const { task, sandbox } = this.options;
    // The verifier's channel starts first, while the setup and the steps run, not after the
    // last one (a recycled sandbox may have one waiting already). A task without a verifier
    // lets such a one go before anything of its own runs.
    if (task.verifier)
      sandbox.prepareVerifier?.({
        ownDirs: task.verifier.files !== undefined || task.verifier.reward_dir !== undefined,
      });
    else await sandbox.dropVerifier?.();
    const setup = await writeWorkspace(sandbox, task, this.options.snapshots, this.options.taskPath ?? null);
    if (setup.skipped.length) {
      // Recorded (not shown to the agent): what of the project folder the workspace lacks, and why.
      const lines = setup.skipped.slice(0, SKIPPED_LISTED).map((p) => `${p.path} (${p.why})`);
      const more = setup.skipped.length - lines.length;
      this.sink.append({
        type: 'warning',
        step: 0,
        source: 'harness',
        code: 'workspace_skipped',
        message: `${setup.skipped.length} path(s) of ${task.workspace.from ?? 'the folder'} were not copied: ${lines.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
      });
    }
    const snap = await this.snapshot(0);
    return { observation: task.goal, info: snap };
  }

  warn(step: number, code: string, message: string): void {
    if (code === 'soft_timeout') this.softFired = true;
    this.sink.append({ type: 'warning', step, source: 'harness', code, message, observation: true });
  }

  async abort(): Promise<void> {
    await this.options.sandbox.killStrays();
  }

  async step(action: StepAction): Promise<StepOutcome> {
    const { task, registry, memory, sandbox } = this.options;
    const k = action.step;
    this.softFired = false;
    const parsed = action.parsed;
    const observation: string[] = [];
    const calls: CallRecord[] = [];
    const writes: { key: string; after: unknown; corruption: string | null }[] = [];
    let fatal: Fatal | undefined;
    let hardTimeout = false;
    let toolMs = 0;
    let final: string | null = null;

    if (parsed.kind === 'parse_error') {
      this.sink.append({
        type: 'parse_error',
        step: k,
        source: 'harness',
        cause: action.cause,
        message: parsed.message,
        raw: action.raw ?? '',
        call_ids: parsed.callIds,
        via: parsed.via,
      });
      observation.push(parsed.message);
    } else if (parsed.kind === 'final') {
      final = parsed.text;
      this.sink.append({ type: 'action', step: k, source: 'agent', cause: action.cause, calls: [], final });
    } else {
      const act = this.sink.append({
        type: 'action',
        step: k,
        source: 'agent',
        cause: action.cause,
        calls: [...parsed.calls],
        final: null,
        via: parsed.via,
      });
      const stepStart = Date.now();
      const hardMs = action.hardMs ?? task.timeouts.step_hard * 1000;
      if (action.external) {
        const t0 = performance.now();
        toolMs += await this.externalCalls(k, act.seq, parsed.calls, action, hardMs);
        toolMs = Math.max(toolMs, performance.now() - t0);
      }
      for (const [i, call] of (action.external ? [] : parsed.calls).entries()) {
        const elapsed = Date.now() - stepStart;
        const hardLeft = Math.max(1, hardMs - elapsed);
        const episodeLeft = Math.max(1, (action.episodeLeftMs ?? Infinity) - elapsed);
        // The call may not outlive the step's hard limit nor the episode's budget.
        const left = Math.min(hardLeft, episodeLeft);
        const callEvent = this.sink.append({
          type: 'tool_call',
          step: k,
          source: 'agent',
          cause: act.seq,
          call_id: call.id,
          name: call.name,
          arguments: call.arguments,
        });
        const given = action.replaced?.get(call.id);
        if (given) {
          // A person gave this result: the tool does not run, nothing is written; the agent sees it.
          this.sink.append({
            type: 'tool_result',
            step: k,
            source: 'human',
            cause: callEvent.seq,
            call_id: call.id,
            name: call.name,
            result: given,
            replaced: true,
          });
          calls.push({ call, result: given, hardTimeout: false });
          this.remember(k, call, given);
          observation.push(JSON.stringify(given));
          continue;
        }
        const t0 = performance.now();
        const outcome = await registry.call(call.name, call.arguments, {
          sandbox,
          memory,
          task,
          hardTimeoutMs: left,
          step: k,
          callIndex: i,
        });
        toolMs += performance.now() - t0;
        for (const f of outcome.faults) {
          this.sink.append({
            type: 'fault',
            step: k,
            source: 'harness',
            cause: callEvent.seq,
            kind: f.kind,
            call_id: call.id,
            detail: f.detail,
          });
        }
        let shown = outcome.result;
        let memoryWrites = outcome.memoryWrites;
        // Only the step's hard limit brings the fallback and the rollback; the episode budget just ends it.
        const hard = hardLeft <= episodeLeft && isHardTimeout(task, call, outcome.result, hardLeft);
        if (hard) {
          hardTimeout = true;
          const fb = fallbackResult(task, call, outcome.result, memory);
          shown = fb.result;
          memoryWrites = [...memoryWrites, ...fb.memoryWrites];
        }
        for (const w of memoryWrites) {
          const corruption = memoryCorruption(w, task.memory);
          writes.push({ key: w.key, after: w.after, corruption });
          this.sink.append({
            type: 'memory_write',
            step: k,
            source: 'environment',
            cause: callEvent.seq,
            ...w,
            corruption,
          });
        }
        this.sink.append({
          type: 'tool_result',
          step: k,
          source: 'environment',
          cause: callEvent.seq,
          call_id: call.id,
          name: call.name,
          result: shown,
          ...(hard ? { real: outcome.result } : {}),
        });
        calls.push({ call, result: shown, hardTimeout: hard });
        this.remember(k, call, shown);
        observation.push(JSON.stringify(shown));
        if (shown.error?.code === 'sandbox_lost') {
          fatal = { code: 'sandbox_lost', message: shown.error.message };
          break;
        }
        if (hard) {
          try {
            await this.rollbackToStable(k, 'hard_timeout');
          } catch (e) {
            fatal = asFatal(e);
          }
          // The calls after it do not run, but each is answered (the API wants every call id answered).
          for (const skipped of parsed.calls.slice(i + 1)) {
            const ev = this.sink.append({
              type: 'tool_call',
              step: k,
              source: 'agent',
              cause: act.seq,
              call_id: skipped.id,
              name: skipped.name,
              arguments: skipped.arguments,
            });
            const result = toolFailure(
              'cancelled',
              `not run: step ${k} hit its hard timeout before this call`,
            );
            this.sink.append({
              type: 'tool_result',
              step: k,
              source: 'harness',
              cause: ev.seq,
              call_id: skipped.id,
              name: skipped.name,
              result,
            });
            calls.push({ call: skipped, result, hardTimeout: false });
          }
          break;
        }
      }
    }

    // Step reward: indicator components weighted by the task (shared/rewards.ts).
    const signature = parsed.kind === 'calls' ? actionSignature(parsed.calls) : null;
    const repeated = signature !== null && signature === this.lastSignature;
    this.lastSignature = signature;
    const toolErrors = calls.filter((c) => !c.result.ok || (c.result.exit_code ?? 0) !== 0).length;
    const reward = stepReward(
      { formatValid: parsed.kind !== 'parse_error', repeated, toolErrors },
      task.rewards.components,
    );
    this.sink.append({
      type: 'reward',
      step: k,
      source: 'harness',
      components: reward.components,
      total: reward.total,
      final: false,
    });

    let snapshotMs = 0;
    let fsyncMs = 0;
    if (!fatal) {
      try {
        const s = await this.snapshot(k);
        snapshotMs = s.snapshotMs;
        fsyncMs = s.fsyncMs;
      } catch (e) {
        fatal = asFatal(e);
      }
    }
    return {
      observation,
      terminated: final !== null || fatal !== undefined,
      truncated: false,
      info: {
        step: k,
        calls,
        memoryWrites: writes,
        final,
        formatValid: parsed.kind !== 'parse_error',
        repeated,
        reward: reward.total,
        softTimeout: this.softFired,
        hardTimeout,
        toolMs,
        snapshotMs,
        fsyncMs,
        fatal,
      },
    };
  }

  /** Records the calls an agent ran itself and what it reported of them; returns the ms it took. */
  private async externalCalls(
    k: number,
    cause: number,
    calls: readonly ToolCall[],
    action: StepAction,
    hardMs: number,
  ): Promise<number> {
    const t0 = performance.now();
    const seqs = calls.map(
      (call) =>
        this.sink.append({
          type: 'tool_call',
          step: k,
          source: 'agent',
          cause,
          call_id: call.id,
          name: call.name,
          arguments: call.arguments,
        }).seq,
    );
    const results = await (action.external as ExternalTools)(calls, hardMs);
    for (const [i, call] of calls.entries()) {
      const real =
        results.get(call.id) ?? toolFailure('cancelled', 'the agent reported nothing for this call');
      const given = action.replaced?.get(call.id);
      this.sink.append({
        type: 'tool_result',
        step: k,
        source: given ? 'human' : 'environment',
        cause: seqs[i],
        call_id: call.id,
        name: call.name,
        result: given ?? real,
        ...(given ? { replaced: true, real } : {}),
      });
      this.remember(k, call, given ?? real);
    }
    return performance.now() - t0;
  }

  /**
   * The step a command a person runs in the sandbox now belongs to: the last step whose
   * snapshot has been taken (its files show in the next step's diff, and replay runs it
   * before that step), or null before snapshot 0. Decided by the snapshot's read, not by
   * the step's end: a step is committed after its snapshot, and a command reported in
   * between ran after it.
   */
  humanCommandStep(reportedAt?: number): number | null {
    return this.taking?.commandStep(reportedAt) ?? this.stable?.step ?? null;
  }

  /**
   * Holds a person's command (at {@link humanCommandStep}) reported after a snapshot was
   * read and before its event is written, to be written right after that event. False
   * otherwise: the caller writes it now.
   */
  holdAfterSnapshot(event: NewTraceEvent, reportedAt?: number): boolean {
    return this.taking?.hold(event, reportedAt) ?? false;
  }

  /**
   * A terminal into this sandbox whose shell reports a person's commands before they reach
   * {@link humanCommandStep} (it asks the sandbox who else ran first): `pending` answers a
   * promise settling once those reported so far are recorded, or null when none is. A
   * snapshot waits for the ones reported before it read the workspace: they ran before, so
   * they are the step before's. Returns the unsubscribe.
   */
  awaitHumanReports(pending: () => Promise<void> | null): () => void {
    this.reporters.add(pending);
    return () => this.reporters.delete(pending);
  }

  /** The commands reported so far and not yet recorded, by every terminal: null when none is. */
  private reportsInFlight(): Promise<void> | null {
    const pending = [...this.reporters].map((p) => p()).filter((p) => p !== null);
    return pending.length ? Promise.all(pending).then(() => undefined) : null;
  }

  /** Takes snapshot k (workspace + session), records it and commits the step. */
  async snapshot(k: number): Promise<{ snapshotMs: number; fsyncMs: number }> {
    const { sandbox, snapshots } = this.options;
    const t0 = performance.now();
    const taking = new SnapshotTaking(k, this.stable?.step ?? Math.max(0, k - 1));
    this.taking = taking;
    let info: SnapshotInfo;
    let session: SessionState;
    try {
      // Asked together: no command runs between the two (the helper answers them in order), and
      // the session's round trip no longer waits for the scan's (one per step of every episode).
      [info, session] = await Promise.all([
        sandbox.snapshot(snapshots, { onTaken: () => taking.read(this.reportsInFlight()) }),
        sandbox.sessionState(),
      ]);
      // Bounded: a terminal's report waits at most WRITERS_WAIT_MS for the sandbox's answer.
      await taking.drained();
    } catch (e) {
      this.taking = null;
      for (const h of taking.fail()) this.sink.append(h);
      throw e;
    }
    this.taking = null;
    const { before, after } = taking.settle();
    for (const h of before) this.sink.append(h);
    const snapshotMs = performance.now() - t0;
    this.sink.append({
      type: 'snapshot',
      step: k,
      source: 'harness',
      tree_hash: info.treeHash,
      manifest: info.manifest,
      changed: this.withUncaptured(info.changed, info.skipped ?? []),
      bytes: info.bytes,
      session: { cwd: session.cwd, env: { ...session.env } },
      duration_ms: info.durationMs,
    });
    for (const skip of info.skipped ?? [])
      this.sink.append({
        type: 'warning',
        step: k,
        source: 'harness',
        code: 'snapshot_file_skipped',
        message: `${skip.path} (${skip.size} bytes) is larger than the per-file snapshot cap and was not captured: a rollback leaves it as it is, a fork or replay starts without it`,
      });
    this.stable = { step: k, manifest: info.manifest, treeHash: info.treeHash, session };
    for (const h of after) this.sink.append(h);
    const fsyncMs = await this.sink.commitStep();
    return { snapshotMs, fsyncMs };
  }

  /**
   * A snapshot's changed paths with the files over the per-file cap the step wrote, marked
   * `captured: false` (they are in no manifest, so no diff sees them): one that appeared or
   * changed size since the last snapshot, one that grew over the cap (the diff says deleted),
   * one that went away.
   */
  private withUncaptured(
    changed: readonly ChangedPath[],
    skipped: readonly { readonly path: string; readonly size: number }[],
  ): ChangedPath[] {
    const now = new Map(skipped.map((s) => [s.path, s.size] as const));
    const out = changed.filter((c) => !(c.change === 'deleted' && now.has(c.path)));
    for (const [path, size] of now) {
      const grew = changed.some((c) => c.change === 'deleted' && c.path === path);
      if (grew || this.uncaptured.get(path) !== size)
        out.push({ path, change: grew || this.uncaptured.has(path) ? 'modified' : 'added', captured: false });
    }
    for (const path of this.uncaptured.keys())
      if (!now.has(path) && !changed.some((c) => c.path === path))
        out.push({ path, change: 'deleted', captured: false });
    this.uncaptured = now;
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  /** Restores the workspace and session to the last stable snapshot and records a `rollback`. */
  async rollbackToStable(step: number, reason: string): Promise<void> {
    const stable = this.stable;
    if (!stable) return;
    const { sandbox, snapshots } = this.options;
    await sandbox.killStrays();
    const restored = await sandbox.restore(snapshots, await snapshots.getManifest(stable.manifest));
    if (stable.session) await sandbox.setSessionState(stable.session);
    // A restore leaves no file the snapshot did not capture.
    this.uncaptured.clear();
    this.sink.append({
      type: 'rollback',
      step,
      source: 'harness',
      to_step: stable.step,
      reason,
      tree_hash: restored.treeHash,
    });
  }

  private remember(step: number, call: ToolCall, result: ToolResult): void {
    this.recentPayloads.push({ step, name: call.name, arguments: call.arguments, result });
    if (this.recentPayloads.length > 3) this.recentPayloads.shift();
  }

  /** Rebuilds the repeated-action state and payload ring from recorded events (fork, resume). */
  restoreFromEvents(events: readonly TraceEvent[]): void {
    this.lastSignature = null;
    this.recentPayloads.length = 0;
    const args = new Map<string, ToolCall>();
    for (const e of events) {
      if (e.type === 'action') this.lastSignature = e.calls.length > 0 ? actionSignature(e.calls) : null;
      if (e.type === 'parse_error') this.lastSignature = null;
      if (e.type === 'tool_call')
        args.set(e.call_id, { id: e.call_id, name: e.name, arguments: e.arguments });
      if (e.type === 'tool_result') {
        const call = args.get(e.call_id);
        if (call) this.remember(e.step, call, e.result);
      }
    }
  }
}

/** A thrown sandbox failure as a fatal cause. */
export function asFatal(e: unknown): Fatal {
  if (e instanceof SandboxFailure) return { code: e.code, message: e.message };
  if (e instanceof SetupFailure) return { code: 'setup_failed', message: e.message };
  return { code: 'internal', message: e instanceof Error ? e.message : String(e) };
}
