import { performance } from 'node:perf_hooks';
import type { Breakpoint } from '../../../shared/breakpoints.js';
import type { HeldAction, StopPoints } from '../../../shared/held-action.js';
import { actionSignature } from '../../../shared/rewards.js';
import type { Task } from '../../../shared/task.js';
import { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { EndEvent, OtherWriters, TraceEvent } from '../../../shared/trace-events.js';
import type { RolledBack } from '../../../shared/contract/models.js';
import { AgentEnded, AgentFailure, type Agent } from '../agents/agent.js';
import type { CallerAgentOptions } from '../agents/agent-spec.js';
import { decideWithin, decisionDeadline, DecisionTimeout, MODEL_TIMEOUT } from './decision-timeout.js';
import { DecisionReleased, manualAgentOf } from '../agents/manual-agent.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { TaskMemory } from '../tools/memory.js';
import type { ToolRegistry } from '../tools/tool-call.js';
import type { EpisodeStore, NewTraceEvent, TraceWriter } from '../trace/trace-store.js';
import { evaluateBreakpoints } from './breakpoints.js';
import { BranchRecorder } from './branch-recorder.js';
import { Branching, placeEnvironment, type AgentFactory, type ForkOpener } from './branching.js';
import type { Conversation } from './conversation.js';
import { asFatal, SandboxEnvironment, type Fatal, type StepOutcome } from './environment.js';
import { EpisodeTimeout } from './episode-timeout.js';
import type {
  AgentOutputChunk,
  ControllerState,
  EpisodeController,
  RollbackOptions,
  StopReason,
} from './episode-controller.js';
import { HarnessError } from './harness-error.js';
import { Listeners } from './listeners.js';
import { MaxSteps } from './max-steps.js';
import { StepTimeout } from './step-timeout.js';
import { heldView, StepGate, type HeldStep } from './step-gate.js';

export type { AgentFactory, ForkOpener } from './branching.js';

/** Where a step's time went, for the bench (ms). */
export interface StepTiming {
  readonly step: number;
  readonly wallMs: number;
  readonly toolMs: number;
  readonly snapshotMs: number;
  readonly fsyncMs: number;
}

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
 * This file holds the loop: the agent decides, the wrapped environment acts (episode
 * timeout ∘ step timeouts ∘ max steps ∘ sandbox), breakpoints are evaluated after each
 * step. Every event goes through the {@link BranchRecorder} (branch-recorder.ts: trace,
 * conversation, listeners, the end of the branch); rollback, branch-off and fork are
 * {@link Branching}'s (branching.ts).
 */
export class EpisodeRunner implements EpisodeController {
  readonly episode: string;
  private readonly task: Task;
  private box: Sandbox | null;
  private agent: Agent;
  private readonly memoryState: TaskMemory;
  private readonly env: SandboxEnvironment;
  private readonly timer: EpisodeTimeout;
  private readonly recorder: BranchRecorder;
  private readonly branching: Branching;
  private current: number;
  private status: ControllerState = 'idle';
  private bps: Breakpoint[];
  private pauseRequested = false;
  private stopRequested = false;
  /** The stop under way: a second stop, or a run asked meanwhile, waits for this one. */
  private stopping: Promise<EndEvent> | null = null;
  private abort = new AbortController();
  private inFlight: Promise<unknown> | null = null;
  private readonly stateListeners = new Listeners<[ControllerState, StopReason | undefined]>();
  private readonly outputListeners = new Listeners<[AgentOutputChunk]>();
  private offAgentOutput: (() => void) | null = null;
  private readonly signatures: (string | null)[] = [];
  private readonly timingList: StepTiming[] = [];
  /** The stops inside a step and the step held at one. */
  private readonly gate: StepGate;
  /** The tools the agent offered its model in the last decision (sandbox:), or null. */
  private agentTools: readonly OpenAiTool[] | null = null;

  constructor(private readonly options: RunnerOptions) {
    this.task = options.task;
    this.episode = options.episode;
    this.box = options.sandbox;
    this.agent = options.agent;
    this.listenToAgent();
    this.memoryState = options.memory;
    this.current = options.startStep ?? 0;
    this.bps = [...(options.breakpoints ?? [])];
    this.recorder = new BranchRecorder(this.recordedBranch(), options.writer, options.inherited ?? []);
    const snapshots = options.store.snapshots(options.episode);
    this.env = new SandboxEnvironment({
      task: this.task,
      sandbox: options.sandbox,
      registry: options.registry,
      memory: options.memory,
      snapshots,
      taskPath: options.taskPath,
      sink: { append: (e) => this.record(e), commitStep: () => this.recorder.commitStep() },
    });
    placeEnvironment(this.env, this.events, this.current);
    this.branching = new Branching({
      ...options,
      pendingFork: options.writer === null ? this.current : null,
      snapshots,
      env: this.env,
      recorder: this.recorder,
    });
    this.timer = new EpisodeTimeout(
      new StepTimeout(
        new MaxSteps(this.env, this.task.max_steps),
        this.task.timeouts.step_soft,
        this.task.timeouts.step_hard,
      ),
      this.task.timeouts.episode,
    );
    this.resetSignatures();
    // An agent that offers its own tools (sandbox:) is parsed and edited against those.
    this.gate = new StepGate(() => this.agentTools ?? options.registry.definitions());
  }

  /** What the recorder reads of this branch. */
  private recordedBranch() {
    return {
      episode: this.episode,
      task: this.task,
      currentStep: () => this.current,
      sandbox: () => this.box,
      currentAgent: () => this.agent,
      fatalContext: () => ({
        last_tool_payloads: [...this.env.recentPayloads],
        memory: this.memoryState.snapshot(),
      }),
    };
  }

  get branch(): string {
    return this.branching.branch;
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
    return this.recorder.ended();
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
    return this.recorder.onEvent(listener);
  }

  onState(listener: (state: ControllerState, reason?: StopReason) => void): () => void {
    return this.stateListeners.add(listener);
  }

  /** Called when continuing after a rollback moved this controller onto a new branch. */
  onBranch(listener: (branch: string) => void): () => void {
    return this.branching.onBranch(listener);
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
    // A person's agent waiting for a decision would hold the step forever: the wait ends.
    const manual = manualAgentOf(this.agent);
    if (manual === this.agent && this.status === 'running') manual.release();
  }

  private async drive(continuous: boolean): Promise<StopReason> {
    if (this.endEvent) return { kind: 'ended', message: `the episode ended: ${this.endEvent.status}` };
    // Stopping: no new step begins (a manual agent asked again hung the CLI, the stop's abort
    // already spent); the run ends with the stop.
    if (this.stopping) {
      const end = await this.stopping;
      return { kind: 'ended', message: `the episode ended: ${end.status}` };
    }
    if (this.status === 'running')
      throw new HarnessError('busy', 'the episode is already running; pause it first');
    this.pauseRequested = false;
    manualAgentOf(this.agent)?.clearRelease();
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

  /**
   * One step: decide, stop before the answer if asked, stop before the tools if asked,
   * deliver the answer, act, snapshot, check limits and breakpoints. A step held at a
   * stop inside it goes on from there the next time.
   */
  private async advance(): Promise<StopReason> {
    if (!this.gate.held()) {
      const stop = await this.decideStep();
      if (stop) return stop;
    }
    const held = this.gate.held() as HeldStep;
    const k = held.step;
    // Time paused at a stop is not the step's: its wall time is the decision plus what follows.
    const started = performance.now() - held.decidedMs;
    if (held.stage === 'before_answer' && this.gate.toBeforeTool(this.bps))
      return this.heldStop('before_tool');
    this.gate.release();
    if (held.deliver) {
      try {
        await held.deliver(held.message);
      } catch (e) {
        return this.decisionFailed(e, k, null);
      }
    }
    const parsed = held.parsed;
    let outcome: StepOutcome;
    try {
      outcome = await this.timer.step({
        step: k,
        parsed,
        cause: held.outputSeq,
        raw: held.raw,
        ...(held.replaced.size > 0 ? { replaced: held.replaced } : {}),
        ...(held.external ? { external: held.external } : {}),
        ...(held.timed ? { hardMs: Math.max(1, this.task.timeouts.step_hard * 1000 - held.decidedMs) } : {}),
      });
    } catch (e) {
      if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
      return this.endFatal(asFatal(e), undefined, k);
    }
    const info = outcome.info;
    // Step k was under way (its tools, its snapshot): the error is step k's, not the last complete one's.
    if (info.fatal && !this.stopRequested) return this.endFatal(info.fatal, undefined, k);
    // The step is recorded whole (its snapshot committed) even when a stop arrived meanwhile.
    if (!info.fatal) this.current = k;
    if (!info.fatal) this.recorder.recordAgentOutput(k);
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

  /**
   * Asks the agent for step k's decision and records it; the step is then held before its
   * answer. Returns a stop reason when the step goes no further now (a stop before the
   * answer, the end), or null to go on.
   */
  private async decideStep(): Promise<StopReason | null> {
    if (this.pendingFork !== null) this.branchOff(this.pendingFork);
    for (const e of this.queued.splice(0)) this.record(e);
    if (this.timer.expired()) return this.finish('episode_timeout');
    const k = this.current + 1;
    const started = performance.now();
    const deadline = decisionDeadline(this.agent, this.task.timeouts.step_hard * 1000, this.timer.leftMs());
    const messages = this.conversation.current();
    const tools = this.options.registry.definitions();
    let decision;
    try {
      decision = await decideWithin(this.agent, deadline?.ms ?? null, this.abort.signal, {
        step: k,
        messages,
        tools,
        context: {
          episode: this.episode,
          task: this.task,
          taskPath: this.options.taskPath,
          history: this.events,
          episodeLeftMs: this.timer.leftMs(),
          sandbox: this.box ?? undefined,
          snapshots: this.env.options.snapshots,
        },
      });
    } catch (e) {
      return this.decisionFailed(e, k, deadline);
    }
    if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
    // The decision counted against the step: the tools get what is left of the hard limit.
    const decidedMs = performance.now() - started;
    this.agentTools = decision.tools ?? null;
    for (const note of decision.notes ?? []) this.record(note);
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
    const stops = this.gate.holdBeforeAnswer(
      {
        step: k,
        // What the model was asked: the request it got, or (an agent of the harness's own) the messages and tools.
        request: decision.request ?? { messages, tools },
        original: decision.message,
        outputSeq: output.seq,
        raw: decision.raw,
        decidedMs,
        timed: deadline !== null,
        ...(decision.deliver ? { deliver: decision.deliver } : {}),
        ...(decision.external ? { external: decision.external } : {}),
      },
      this.bps,
    );
    return stops ? this.heldStop('before_answer') : null;
  }

  /** The stop reason of the held step at `kind`. */
  private heldStop(kind: 'before_answer' | 'before_tool'): StopReason {
    const held = this.gate.held() as HeldStep;
    return {
      kind,
      ...(held.breakpoint ? { breakpoint: held.breakpoint } : {}),
      message: `step ${held.step}: ${held.why}`,
      held: heldView(held),
    };
  }

  /**
   * Why the agent could not decide step k (or take its answer), as the way the episode ends. The
   * error is step k's, the decision that failed: recorded at the last complete step, the "model
   * failed" mark sat on step 2's row (and `show` printed it under step 2) when call 3 failed.
   */
  private decisionFailed(
    e: unknown,
    k: number,
    deadline: { readonly by: 'step' | 'episode' } | null,
  ): Promise<StopReason> | StopReason {
    if (this.stopRequested) return { kind: 'ended', message: 'stopped' };
    if (e instanceof DecisionReleased) return { kind: 'paused', message: e.message };
    if (e instanceof DecisionTimeout && deadline?.by === 'episode') return this.finish('episode_timeout');
    if (e instanceof DecisionTimeout)
      return this.endFatal(
        {
          code: MODEL_TIMEOUT,
          message: `the agent did not decide step ${k} within the hard step timeout (${this.task.timeouts.step_hard} s, retries included); check the model endpoint answers, or raise timeouts.step_hard`,
        },
        undefined,
        k,
      );
    if (e instanceof AgentEnded) return this.finish(e.endReason);
    if (e instanceof AgentFailure)
      return this.endFatal({ code: e.endReason, message: e.message }, e.details, k);
    return this.endFatal({ code: 'internal', message: (e as Error).message }, undefined, k);
  }

  stopPoints(): StopPoints {
    return this.gate.stopPoints();
  }

  setStopPoints(points: Partial<StopPoints>): StopPoints {
    return this.gate.setStopPoints(points);
  }

  held(): HeldAction | null {
    const h = this.gate.held();
    return h ? heldView(h) : null;
  }

  editAnswer(message: unknown): HeldAction {
    this.assertHeldEditable();
    this.record(this.gate.editAnswer(message));
    return this.held() as HeldAction;
  }

  editArguments(callId: string, args: unknown): HeldAction {
    this.assertHeldEditable();
    this.record(this.gate.editArguments(callId, args));
    return this.held() as HeldAction;
  }

  replaceResult(callId: string, result: ToolResult): HeldAction {
    this.assertHeldEditable();
    this.gate.replaceResult(callId, result);
    return this.held() as HeldAction;
  }

  /** A held step is changed only while the stepper waits at it. */
  private assertHeldEditable(): void {
    this.assertOpen();
    if (this.status === 'running')
      throw new HarnessError('busy', 'pause the episode before changing the step');
  }

  // The loop's view of the recorder and the branching (names the loop above reads).
  private get events(): TraceEvent[] {
    return this.recorder.events;
  }

  private get conversation(): Conversation {
    return this.recorder.conversation;
  }

  private get endEvent(): EndEvent | null {
    return this.recorder.ended();
  }

  private get queued(): NewTraceEvent[] {
    return this.recorder.queued;
  }

  private get pendingFork(): number | null {
    return this.branching.pendingFork;
  }

  private record(event: NewTraceEvent): TraceEvent {
    return this.recorder.record(event);
  }

  private finish(endReason: string): Promise<StopReason> {
    return this.recorder.finish(endReason);
  }

  private endFatal(fatal: Fatal, details?: Record<string, unknown>, step?: number): Promise<StopReason> {
    return this.recorder.endFatal(fatal, details, step);
  }

  private branchOff(step: number): void {
    this.branching.branchOff(step, this.agent);
  }

  /** Stops the branch; `endReason` says why (default `stopped`; a rejected candidate says so). */
  stop(endReason = 'stopped'): Promise<EndEvent> {
    if (this.endEvent) return Promise.resolve(this.endEvent);
    this.stopping ??= this.stopNow(endReason);
    return this.stopping;
  }

  private async stopNow(endReason: string): Promise<EndEvent> {
    this.stopRequested = true;
    this.abort.abort();
    // A step held at a stop inside it never runs: its answer is not delivered (an exec agent is told the episode ended).
    this.gate.release();
    if (this.inFlight) {
      // Give the step a moment to land whole; past that the trace closes without it.
      await Promise.race([this.inFlight, new Promise((r) => setTimeout(r, 3_000).unref())]);
    }
    const end = await this.recorder.interrupt(endReason);
    // With its end, as a finish says it: the window shows the status before it can read the trace's end.
    this.setState('ended', {
      kind: 'ended',
      message: 'stopped',
      end: { status: end.status, end_reason: end.end_reason },
    });
    return end;
  }

  inject(role: 'system' | 'user', content: string): void {
    this.assertOpen();
    this.assertNotHeld('inject a message');
    const event: NewTraceEvent = { type: 'injected', step: this.current, source: 'injected', role, content };
    this.recorder.recordOrQueue(event, this.status !== 'running' && this.pendingFork === null);
  }

  overrideLastResult(shown: ToolResult): void {
    this.assertOpen();
    if (this.status === 'running')
      throw new HarnessError('busy', 'pause the episode before overriding a result');
    this.assertNotHeld('override a result');
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
  recordHumanCommand(command: {
    command: string;
    cwd?: string;
    exit_code?: number;
    files?: readonly string[];
    others?: OtherWriters;
    /** When its shell's report reached the engine (HumanCommand.reportedAt); not recorded. */
    reportedAt?: number;
  }): void {
    if (this.endEvent) return;
    const { reportedAt, ...fields } = command;
    // The command changed the sandbox now: a runner reopened at a step or rolled back gets its
    // branch now (as its next step would), so the command is recorded even if no step follows.
    if (this.pendingFork !== null && this.status !== 'running') {
      this.branchOff(this.pendingFork);
      for (const e of this.queued.splice(0)) this.record(e);
    }
    // Recorded at once, while a step runs too, at the step the environment says (the last
    // whose snapshot is taken: once a running step's snapshot is, that step, before it is
    // committed). It is no message to the agent, so nothing waits for a step boundary: held
    // for the next step, it reached the window only once that step began, after the running
    // step's events, and a stop before it was lost from the trace.
    const step = this.env.humanCommandStep(reportedAt) ?? this.current;
    const event: NewTraceEvent = { type: 'human_command', step, source: 'human', ...fields };
    if (!this.env.holdAfterSnapshot(event, reportedAt))
      this.recorder.recordOrQueue(event, this.pendingFork === null);
  }

  /**
   * A terminal whose commands reach {@link recordHumanCommand} some time after its shell
   * reported them (SandboxEnvironment.awaitHumanReports): a step's snapshot waits for those
   * reported before it. Returns the unsubscribe.
   */
  awaitHumanReports(pending: () => Promise<void> | null): () => void {
    return this.env.awaitHumanReports(pending);
  }

  /** Replaces the agent for the continuation (a scripted file then starts at its first line). */
  useAgent(agent: Agent): void {
    if (agent !== this.agent) void this.agent.needs.process?.dispose('agent_replaced');
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
      this.agent.needs.process?.onOutput((stream, data, truncated) =>
        this.outputListeners.emit({ step: this.current + 1, stream, data, truncated }),
      ) ?? null;
  }

  async rollbackTo(step: number, options: RollbackOptions = {}): Promise<RolledBack> {
    if (this.status === 'running') throw new HarnessError('busy', 'pause the episode before rolling back');
    // A held step's decision is dropped with it: the agent decides that step again.
    const dropped = this.gate.held() ? 1 : 0;
    const from = this.branching.branch;
    const rewound = await this.branching.rollback(step, {
      current: this.current,
      sandbox: this.box,
      agent: this.agent,
      dropped,
    });
    this.gate.release();
    this.current = step;
    this.resetSignatures();
    this.agent = rewound.agent;
    this.listenToAgent();
    if (rewound.wasEnded) {
      this.stopRequested = false;
      this.stopping = null;
      this.abort = new AbortController();
    }
    // The branch that goes on is made now, as a reopen's is: paused at the step, before any step.
    if (options.branchNow && this.pendingFork !== null) {
      this.branchOff(this.pendingFork);
      for (const e of this.queued.splice(0)) this.record(e);
    }
    const rollback: RolledBack = { from, to_step: step, dropped: rewound.dropped };
    this.setState('paused', { kind: 'paused', message: `rolled back to step ${step}`, rollback });
    return rollback;
  }

  async fork(
    step: number,
    agentSpec?: string,
    agentOptions?: CallerAgentOptions,
  ): Promise<EpisodeController> {
    return this.branching.fork(step, agentSpec, agentOptions);
  }

  async dispose(options: { keepSandbox?: boolean } = {}): Promise<void> {
    if (!this.endEvent && this.recorder.isOpen()) await this.stop();
    await this.agent.needs.process?.dispose('disposed');
    const box = this.box;
    this.box = null;
    if (box && !options.keepSandbox) await this.options.release(box);
  }

  /** Messages and overrides wait until a held step has run: they belong between steps. */
  private assertNotHeld(what: string): void {
    const held = this.gate.held();
    if (held)
      throw new HarnessError(
        'busy',
        `step ${held.step} is waiting before its ${held.stage === 'before_answer' ? 'answer' : 'tools'}; run it (or replace its result), then ${what}`,
      );
  }

  private assertOpen(): void {
    if (this.endEvent)
      throw new HarnessError('conflict', 'the episode has ended; roll back or fork to continue');
  }

  /** The action signatures of the steps so far, for the repeated-action breakpoint. */
  private resetSignatures(): void {
    this.signatures.length = 0;
    for (const e of this.events) this.signatures.push(...signatureOf(e));
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
