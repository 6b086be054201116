import { performance } from 'node:perf_hooks';
import type { Breakpoint } from '../../../shared/breakpoints.js';
import { actionSignature, finalReward } from '../../../shared/rewards.js';
import type { Task } from '../../../shared/task.js';
import { ToolResult } from '../../../shared/tool-result.js';
import type { EndEvent, EpisodeStatus, TraceEvent, VerifierResult } from '../../../shared/trace-events.js';
import { AgentEnded, AgentFailure, type Agent } from '../agents/agent.js';
import { decideWithin, decisionDeadline, DecisionTimeout, MODEL_TIMEOUT } from './decision-timeout.js';
import { parseAction } from '../agents/parse-action.js';
import { logger } from '../log.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import type { TaskMemory } from '../tools/memory.js';
import type { ToolRegistry } from '../tools/tool-call.js';
import type { EpisodeStore, NewTraceEvent, TraceWriter } from '../trace/trace-store.js';
import { evaluateBreakpoints } from './breakpoints.js';
import type { Conversation } from './conversation.js';
import { asFatal, SandboxEnvironment, type Fatal, type StepOutcome } from './environment.js';
import { EpisodeTimeout } from './episode-timeout.js';
import type {
  AgentOutputChunk,
  ControllerState,
  EpisodeController,
  StopReason,
} from './episode-controller.js';
import { episodeStatus } from './episode-status.js';
import { HarnessError } from './harness-error.js';
import { Listeners } from './listeners.js';
import { cutAtStep, snapshotAt } from '../trace/lineage.js';
import { MaxSteps } from './max-steps.js';
import { conversationFromEvents, episodeReturn, memoryFromEvents } from './state-at.js';
import { StepTimeout } from './step-timeout.js';
import type { TraceSink } from './trace-sink.js';
import { runVerifier } from './verifier.js';
import { restoreSandbox } from './restore-sandbox.js';

const log = logger('harness');

/** Where a step's time went, for the bench (ms). */
export interface StepTiming {
  readonly step: number;
  readonly wallMs: number;
  readonly toolMs: number;
  readonly snapshotMs: number;
  readonly fsyncMs: number;
}

/** Builds an agent from a spec; `skip` decisions already made. */
export type AgentFactory = (spec: string, skip: number) => Agent;

/** Opens another live branch at step k of this one (fresh sandbox), for `fork`. */
export type ForkOpener = (fromBranch: string, step: number, agentSpec?: string) => Promise<EpisodeController>;

/** Everything a runner is built from. The factories in `index.ts` assemble it. */
export interface RunnerOptions {
  readonly task: Task;
  readonly taskPath: string | null;
  readonly store: EpisodeStore;
  readonly episode: string;
  /** This branch, or (an episode reopened without a branch yet) the branch it was opened from. */
  readonly branch: string;
  /** Null when the controller was opened to look around: the first step then forks a branch. */
  readonly writer: TraceWriter | null;
  readonly sandbox: Sandbox;
  readonly registry: ToolRegistry;
  readonly memory: TaskMemory;
  readonly agent: Agent;
  readonly makeAgent: AgentFactory;
  readonly image: string;
  /** Events inherited from ancestors (and, for a reopened branch, its own up to `startStep`). */
  readonly inherited?: readonly TraceEvent[];
  readonly startStep?: number;
  readonly breakpoints?: readonly Breakpoint[];
  /** Destroys (or returns to a pool) the sandbox. */
  readonly release: (sandbox: Sandbox) => Promise<void>;
  readonly openFork?: ForkOpener;
  /** Extra header fields for branches this runner creates (e.g. `resume_of`). */
  readonly headerExtra?: Record<string, unknown>;
}

/**
 * A live episode branch, steppable like a debugger (the {@link EpisodeController}).
 * The agent decides, the wrapped environment acts (episode timeout ∘ step timeouts ∘
 * max steps ∘ sandbox), every event goes through one recorder that feeds the trace,
 * the conversation and the listeners, and breakpoints are evaluated after each step.
 */
export class EpisodeRunner implements EpisodeController {
  readonly episode: string;
  private branchId: string;
  private writer: TraceWriter | null;
  private readonly task: Task;
  private readonly store: EpisodeStore;
  private readonly snapshots: SnapshotStore;
  private box: Sandbox | null;
  private agent: Agent;
  private readonly memoryState: TaskMemory;
  private conversation: Conversation;
  private readonly env: SandboxEnvironment;
  private readonly timer: EpisodeTimeout;
  private events: TraceEvent[];
  private current: number;
  private status: ControllerState = 'idle';
  private bps: Breakpoint[];
  private pauseRequested = false;
  private stopRequested = false;
  private abort = new AbortController();
  private inFlight: Promise<unknown> | null = null;
  private pendingFork: number | null;
  private readonly queued: NewTraceEvent[] = [];
  private readonly eventListeners = new Listeners<[TraceEvent]>();
  private readonly stateListeners = new Listeners<[ControllerState, StopReason | undefined]>();
  private readonly branchListeners = new Listeners<[string]>();
  private readonly outputListeners = new Listeners<[AgentOutputChunk]>();
  private offAgentOutput: (() => void) | null = null;
  private endEvent: EndEvent | null = null;
  private readonly signatures: (string | null)[] = [];
  private readonly timingList: StepTiming[] = [];

  constructor(private readonly options: RunnerOptions) {
    this.task = options.task;
    this.episode = options.episode;
    this.branchId = options.branch;
    this.writer = options.writer;
    this.store = options.store;
    this.snapshots = options.store.snapshots(options.episode);
    this.box = options.sandbox;
    this.agent = options.agent;
    this.listenToAgent();
    this.memoryState = options.memory;
    this.events = [...(options.inherited ?? [])];
    this.current = options.startStep ?? 0;
    this.pendingFork = options.writer === null ? this.current : null;
    this.bps = [...(options.breakpoints ?? [])];
    this.conversation = conversationFromEvents(this.task, this.events);
    const sink: TraceSink = {
      append: (e) => this.record(e),
      commitStep: () => this.writer?.commitStep() ?? 0,
    };
    this.env = new SandboxEnvironment({
      task: this.task,
      sandbox: options.sandbox,
      registry: options.registry,
      memory: options.memory,
      snapshots: this.snapshots,
      sink,
    });
    this.env.restoreFromEvents(this.events);
    const snap = snapshotAt(this.events, this.current);
    if (snap)
      this.env.stable = {
        step: snap.step,
        manifest: snap.manifest,
        treeHash: snap.tree_hash,
        session: snap.session,
      };
    this.timer = new EpisodeTimeout(
      new StepTimeout(
        new MaxSteps(this.env, this.task.max_steps),
        this.task.timeouts.step_soft,
        this.task.timeouts.step_hard,
      ),
      this.task.timeouts.episode,
    );
    for (const e of this.events) this.signatures.push(...signatureOf(e));
  }

  get branch(): string {
    return this.branchId;
  }

  state(): ControllerState {
    return this.status;
  }

  currentStep(): number {
    return this.current;
  }

  sandbox(): Sandbox | null {
    return this.box;
  }

  /** The agent deciding the next step. */
  currentAgent(): Agent {
    return this.agent;
  }

  /** The end event once the branch is closed, else null. */
  ended(): EndEvent | null {
    return this.endEvent;
  }

  /** Where each step's time went. */
  timings(): readonly StepTiming[] {
    return this.timingList;
  }

  /** The messages the agent will see at its next decision. */
  messages() {
    return this.conversation.current();
  }

  /** Every event of this branch so far (ancestry included). */
  history(): readonly TraceEvent[] {
    return this.events;
  }

  onEvent(listener: (event: TraceEvent) => void): () => void {
    for (const e of this.events) listener(e);
    return this.eventListeners.add(listener);
  }

  onState(listener: (state: ControllerState, reason?: StopReason) => void): () => void {
    return this.stateListeners.add(listener);
  }

  /** Called when continuing after a rollback moved this controller onto a new branch. */
  onBranch(listener: (branch: string) => void): () => void {
    return this.branchListeners.add(listener);
  }

  setBreakpoints(breakpoints: readonly Breakpoint[]): void {
    this.bps = [...breakpoints];
  }

  breakpoints(): readonly Breakpoint[] {
    return this.bps;
  }

  memory(): Record<string, unknown> {
    return this.memoryState.snapshot();
  }

  /** Sets up the workspace and records snapshot 0 (new episodes only). */
  async reset(): Promise<void> {
    try {
      await this.timer.reset();
    } catch (e) {
      await this.endFatal(asFatal(e));
    }
  }

  async step(): Promise<StopReason> {
    return this.drive(false);
  }

  async run(): Promise<StopReason> {
    return this.drive(true);
  }

  pause(): void {
    this.pauseRequested = true;
  }

  private async drive(continuous: boolean): Promise<StopReason> {
    if (this.endEvent) return { kind: 'ended', message: `the episode ended: ${this.endEvent.status}` };
    if (this.status === 'running')
      throw new HarnessError('busy', 'the episode is already running; pause it first');
    this.pauseRequested = false;
    this.setState('running');
    let reason: StopReason;
    for (;;) {
      this.timer.beginStep();
      const work = this.advance().catch((e: unknown) =>
        this.endFatal({ code: 'internal', message: `harness bug: ${(e as Error).stack ?? String(e)}` }),
      );
      this.inFlight = work;
      reason = await work;
      this.inFlight = null;
      this.timer.endStep();
      if (reason.kind !== 'step' || !continuous) break;
      if (this.pauseRequested) {
        reason = { kind: 'paused', message: `paused after step ${this.current}` };
        break;
      }
    }
    this.setState(this.endEvent ? 'ended' : 'paused', reason);
    return reason;
  }

  /** One step: decide, act, snapshot, check limits and breakpoints. */
  private async advance(): Promise<StopReason> {
    if (this.pendingFork !== null) this.branchOff(this.pendingFork);
    for (const e of this.queued.splice(0)) this.record(e);
    if (this.timer.expired()) return this.finish('episode_timeout');
    const k = this.current + 1;
    const started = performance.now();
    const deadline = decisionDeadline(this.agent, this.task.timeouts.step_hard * 1000, this.timer.leftMs());
    let decision;
    try {
      decision = await decideWithin(this.agent, deadline?.ms ?? null, this.abort.signal, {
        step: k,
        messages: this.conversation.current(),
        tools: this.options.registry.definitions(),
        context: {
          episode: this.episode,
          task: this.task,
          taskPath: this.options.taskPath,
          history: this.events,
          episodeLeftMs: this.timer.leftMs(),
        },
      });
    } catch (e) {
      if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
      if (e instanceof DecisionTimeout && deadline?.by === 'episode') return this.finish('episode_timeout');
      if (e instanceof DecisionTimeout)
        return this.endFatal({
          code: MODEL_TIMEOUT,
          message: `the agent did not decide step ${k} within the hard step timeout (${this.task.timeouts.step_hard} s, retries included); check the model endpoint answers, or raise timeouts.step_hard`,
        });
      if (e instanceof AgentEnded) return this.finish(e.endReason);
      if (e instanceof AgentFailure)
        return this.endFatal({ code: e.endReason, message: e.message }, e.details);
      return this.endFatal({ code: 'internal', message: (e as Error).message });
    }
    if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
    // The decision counted against the step: the tools get what is left of the hard limit.
    const decidedMs = performance.now() - started;
    if (decision.request !== undefined) {
      this.record({
        type: 'model_request',
        step: k,
        source: 'harness',
        request: decision.request,
        ...(decision.requestMeta ?? {}),
      });
    }
    const output = this.record({
      type: 'model_output',
      step: k,
      source: 'agent',
      raw: decision.raw,
      message: decision.message,
      usage: decision.usage ?? null,
      ...(decision.logprobs !== undefined ? { logprobs: decision.logprobs } : {}),
      latency_ms: decision.latencyMs,
      ...(decision.response ? { response: decision.response } : {}),
    });
    const parsed = parseAction(decision.message, this.options.registry.definitions(), k);
    let outcome: StepOutcome;
    try {
      outcome = await this.timer.step({
        step: k,
        parsed,
        cause: output.seq,
        raw: decision.raw,
        ...(deadline ? { hardMs: Math.max(1, this.task.timeouts.step_hard * 1000 - decidedMs) } : {}),
      });
    } catch (e) {
      if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
      return this.endFatal(asFatal(e));
    }
    const info = outcome.info;
    if (info.fatal && !this.stopRequested) return this.endFatal(info.fatal);
    // The step is recorded whole (its snapshot committed) even when a stop arrived meanwhile.
    if (!info.fatal) this.current = k;
    if (!info.fatal) this.recordAgentOutput(k);
    if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
    const wallMs = performance.now() - started;
    this.timingList.push({
      step: k,
      wallMs,
      toolMs: info.toolMs,
      snapshotMs: info.snapshotMs,
      fsyncMs: info.fsyncMs,
    });
    this.signatures.push(parsed.kind === 'calls' ? actionSignature(parsed.calls) : null);
    if (outcome.terminated) return this.finish('final_answer');
    if (outcome.truncated) return this.finish(info.truncation ?? 'max_steps');
    const hit = evaluateBreakpoints(this.bps, {
      info,
      wallMs,
      signatures: this.signatures,
      task: this.task,
      events: this.events,
    });
    if (hit) return { kind: 'breakpoint', breakpoint: hit.breakpoint, message: hit.message };
    return { kind: 'step', message: `step ${k} done` };
  }

  /** The one place events are recorded: trace, conversation, history, listeners. */
  private record(event: NewTraceEvent): TraceEvent {
    if (!this.writer) throw new HarnessError('conflict', `no open branch to record ${event.type} in`);
    const written = this.writer.append(event);
    this.conversation.apply(written);
    this.events.push(written);
    this.eventListeners.emit(written);
    return written;
  }

  /** Ends the episode: verifier in a fresh shell, final reward, status by the Contracts. */
  private async finish(endReason: string): Promise<StopReason> {
    const verifier: VerifierResult | null = await runVerifier(this.task, this.box);
    const fin = finalReward(verifier?.success ?? null, this.task.rewards.components);
    this.record({
      type: 'reward',
      step: this.current,
      source: 'harness',
      components: fin.components,
      total: fin.total,
      final: true,
    });
    const status = episodeStatus(endReason, verifier);
    await this.close(status, endReason, verifier, fin.total);
    return { kind: 'ended', message: `${status}: ${endReason}` };
  }

  /** A fatal error: `error` event with the last 3 tool payloads and the memory, then status `error`. */
  private async endFatal(fatal: Fatal, details?: Record<string, unknown>): Promise<StopReason> {
    if (this.endEvent || !this.writer) return { kind: 'ended', message: fatal.message };
    log.error(`episode ${this.episode}: ${fatal.code}: ${fatal.message}`);
    this.record({
      type: 'error',
      step: this.current,
      source: 'harness',
      code: fatal.code,
      message: fatal.message,
      fatal: true,
      context: {
        last_tool_payloads: [...this.env.recentPayloads],
        memory: this.memoryState.snapshot(),
        ...(details ?? {}),
      },
    });
    await this.close('error', fatal.code, null, 0);
    return { kind: 'ended', message: `error: ${fatal.code}: ${fatal.message}` };
  }

  private async close(
    status: EpisodeStatus,
    endReason: string,
    verifier: VerifierResult | null,
    finalTotal: number,
    /** False when a rollback closes the abandoned branch: listeners follow the live one. */
    notify = true,
  ) {
    if (!this.writer) return;
    const fields = {
      status,
      end_reason: endReason,
      verifier,
      steps: this.current,
      return: episodeReturn(this.events, this.current, finalTotal, this.task.rewards.gamma),
      step: this.current,
    };
    const writer = this.writer;
    // An agent running a process of its own (exec:) is stopped with the branch; what it wrote last is kept.
    await this.agent.dispose?.(endReason);
    this.recordAgentOutput(this.current);
    // The end event's seq is the writer's next one (FileTraceWriter exposes it).
    const seq = (writer as { seq?: number }).seq ?? -1;
    this.writer = null;
    await writer.close(fields);
    const end: EndEvent = { ...fields, type: 'end', source: 'harness', seq, t: Date.now() };
    this.endEvent = end;
    if (!notify) return;
    this.eventListeners.emit(end);
  }

  /** Stops the branch; `endReason` says why (default `stopped`; a rejected candidate says so). */
  async stop(endReason = 'stopped'): Promise<EndEvent> {
    if (this.endEvent) return this.endEvent;
    this.stopRequested = true;
    this.abort.abort();
    if (this.inFlight) {
      // Give the step a moment to land whole; past that the trace closes without it.
      await Promise.race([this.inFlight, new Promise((r) => setTimeout(r, 3_000).unref())]);
    }
    if (!this.endEvent) {
      if (this.writer) await this.close('interrupted', endReason, null, 0);
      else
        this.endEvent = {
          type: 'end',
          source: 'harness',
          seq: -1,
          t: Date.now(),
          step: this.current,
          status: 'interrupted',
          end_reason: 'stopped',
          verifier: null,
        };
    }
    this.setState('ended', { kind: 'ended', message: 'stopped' });
    return this.endEvent as EndEvent;
  }

  inject(role: 'system' | 'user', content: string): void {
    this.assertOpen();
    const event: NewTraceEvent = { type: 'injected', step: this.current, source: 'injected', role, content };
    if (this.status === 'running' || this.pendingFork !== null || !this.writer) this.queued.push(event);
    else this.record(event);
  }

  overrideLastResult(shown: ToolResult): void {
    this.assertOpen();
    if (this.status === 'running')
      throw new HarnessError('busy', 'pause the episode before overriding a result');
    if (this.pendingFork !== null) {
      throw new HarnessError(
        'conflict',
        'after a rollback the last result belongs to the parent branch; step first',
      );
    }
    const parsed = ToolResult.safeParse(shown);
    if (!parsed.success)
      throw new HarnessError('invalid_input', `not a tool result: ${parsed.error.message}`);
    const last = [...this.events].reverse().find((e) => e.type === 'tool_result');
    if (!last || last.type !== 'tool_result' || last.step !== this.current) {
      throw new HarnessError('not_found', `step ${this.current} has no tool result to override`);
    }
    this.record({
      type: 'override',
      step: this.current,
      source: 'injected',
      cause: last.seq,
      call_id: last.call_id,
      real: last.result,
      shown: parsed.data,
    });
  }

  /** Records a command a person ran in the sandbox terminal (the terminal's history hook calls this). */
  recordHumanCommand(command: { command: string; cwd?: string; exit_code?: number }): void {
    if (this.endEvent) return;
    const event: NewTraceEvent = { type: 'human_command', step: this.current, source: 'human', ...command };
    if (this.status === 'running' || this.pendingFork !== null || !this.writer) this.queued.push(event);
    else this.record(event);
  }

  /** Replaces the agent for the continuation (a scripted file then starts at its first line). */
  useAgent(agent: Agent): void {
    if (agent !== this.agent) void this.agent.dispose?.('agent_replaced');
    this.agent = agent;
    this.listenToAgent();
  }

  /** An exec: agent's own output as it is written, with the step it belongs to; returns an unsubscribe. */
  onAgentOutput(listener: (chunk: AgentOutputChunk) => void): () => void {
    return this.outputListeners.add(listener);
  }

  /** Follows the current agent's output (the agent changes on a rollback or a replacement). */
  private listenToAgent(): void {
    this.offAgentOutput?.();
    this.offAgentOutput =
      this.agent.onOutput?.((stream, data, truncated) =>
        this.outputListeners.emit({ step: this.current + 1, stream, data, truncated }),
      ) ?? null;
  }

  /** Records what an exec: agent's process wrote since the last step as step `step`'s output. */
  private recordAgentOutput(step: number): void {
    const out = this.agent.takeOutput?.();
    if (out && this.writer) this.record({ type: 'agent_output', step, source: 'agent', ...out });
  }

  async rollbackTo(step: number): Promise<void> {
    if (this.status === 'running') throw new HarnessError('busy', 'pause the episode before rolling back');
    if (!Number.isInteger(step) || step < 0 || step > this.current) {
      throw new HarnessError(
        'invalid_input',
        `cannot roll back to step ${step}: steps 0..${this.current} exist`,
      );
    }
    const box = this.box;
    if (!box)
      throw new HarnessError('conflict', 'the sandbox is gone; reopen the episode at that step instead');
    const snap = snapshotAt(this.events, step);
    if (!snap) throw new HarnessError('not_found', `no snapshot of step ${step} in this branch`);
    const restored = await restoreSandbox(box, this.snapshots, snap);
    const skip = this.agentSkipAt(step);
    const kept = cutAtStep(this.events, step);
    this.memoryState.restore(memoryFromEvents(this.task, kept));
    if (this.writer && !this.endEvent) {
      // The abandoned branch is closed now, as a person stopped it: its trace stays whole.
      this.record({
        type: 'rollback',
        step: this.current,
        source: 'human',
        to_step: step,
        reason: 'user',
        tree_hash: restored.treeHash,
      });
      await this.close('interrupted', `rolled_back_to_${step}`, null, 0, false);
    }
    this.writer = null;
    this.events = kept;
    this.conversation = conversationFromEvents(this.task, kept);
    this.env.restoreFromEvents(kept);
    this.env.stable = { step, manifest: snap.manifest, treeHash: snap.tree_hash, session: snap.session };
    this.signatures.length = 0;
    for (const e of kept) this.signatures.push(...signatureOf(e));
    this.current = step;
    this.pendingFork = step;
    this.queued.length = 0;
    // Rolling back time rolls the script back too: continuing re-decides step k+1 from line k+1.
    // An exec agent restarts its process, fast-forwarded through steps 1..k from the recording.
    if (this.agent.kind === 'scripted' || this.agent.kind === 'replay' || this.agent.kind === 'exec') {
      await this.agent.dispose?.('rolled_back');
      this.agent = this.options.makeAgent(this.agent.spec, skip);
      this.listenToAgent();
    }
    if (this.endEvent) {
      this.endEvent = null;
      this.stopRequested = false;
      this.abort = new AbortController();
    }
    this.setState('paused', { kind: 'paused', message: `rolled back to step ${step}` });
  }

  /** Decisions the current agent had made by step `step` (scripted and replay agents skip them). */
  private agentSkipAt(step: number): number {
    const consumed = (this.agent as { consumed?: () => number }).consumed?.() ?? 0;
    return Math.max(0, consumed - (this.current - step));
  }

  /** Continuing after a rollback (or in a reopened episode): a new branch forked at `step`. */
  private branchOff(step: number): void {
    const parent = this.branchId;
    const created = this.store.createBranch(this.episode, parent, step, {
      parent_branch: parent,
      fork_step: step,
      task: this.task as unknown as Record<string, unknown>,
      task_path: this.options.taskPath,
      agent: { spec: this.agent.spec, kind: this.agent.kind, ...this.agent.describe() },
      image: this.options.image,
      created: Date.now(),
      ...(this.options.headerExtra ?? {}),
    });
    this.branchId = created.branch;
    this.writer = created.writer;
    this.endEvent = null;
    this.pendingFork = null;
    this.branchListeners.emit(created.branch);
  }

  async fork(step: number, agentSpec?: string): Promise<EpisodeController> {
    if (!this.options.openFork) throw new HarnessError('conflict', 'this controller cannot open forks');
    return this.options.openFork(this.branchId, step, agentSpec);
  }

  async dispose(options: { keepSandbox?: boolean } = {}): Promise<void> {
    if (!this.endEvent && this.writer) await this.stop();
    await this.agent.dispose?.('disposed');
    const box = this.box;
    this.box = null;
    if (box && !options.keepSandbox) await this.options.release(box);
  }

  private assertOpen(): void {
    if (this.endEvent)
      throw new HarnessError('conflict', 'the episode has ended; roll back or fork to continue');
  }

  private setState(state: ControllerState, reason?: StopReason): void {
    this.status = state;
    this.stateListeners.emit(state, reason);
  }
}

function signatureOf(e: TraceEvent): (string | null)[] {
  if (e.type === 'action') return [e.calls.length > 0 ? actionSignature(e.calls) : null];
  if (e.type === 'parse_error') return [null];
  return [];
}
