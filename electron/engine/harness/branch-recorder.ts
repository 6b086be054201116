import { finalReward } from '../../../shared/rewards.js';
import type { Task } from '../../../shared/task.js';
import type { EndEvent, EpisodeStatus, TraceEvent, VerifierResult } from '../../../shared/trace-events.js';
import type { Agent } from '../agents/agent.js';
import { logger } from '../log.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { NewTraceEvent, TraceWriter } from '../trace/trace-store.js';
import type { Conversation } from './conversation.js';
import type { StopReason } from './episode-controller.js';
import type { Fatal } from './environment.js';
import { episodeStatus } from './episode-status.js';
import { HarnessError } from './harness-error.js';
import { Listeners } from './listeners.js';
import { conversationFromEvents } from './state-at.js';
import { episodeReturn } from '../trace/branch-outcome.js';
import { runVerifier } from './verifier.js';

const log = logger('harness');

/** What the recorder reads of the live branch it records (the runner answers). */
export interface RecordedBranch {
  readonly episode: string;
  readonly task: Task;
  /** The last completed step: the step of the end event and of the final reward. */
  currentStep(): number;
  /** Where the verifier runs (null once the sandbox is gone). */
  sandbox(): Sandbox | null;
  /** The agent, stopped with the branch (an exec agent's process). */
  currentAgent(): Agent;
  /** What a fatal error event carries besides its code: the last tool payloads, the memory. */
  fatalContext(): Record<string, unknown>;
}

/**
 * The recording side of a live branch: the one place its events are written (trace,
 * conversation, history, listeners), events held back until a branch is open, and the
 * end of the branch — a finish with the verifier and final reward, a fatal error, or
 * an interruption. The loop (episode-runner.ts) and the rollback (branching.ts) call it.
 */
export class BranchRecorder {
  private writer: TraceWriter | null;
  private endEvent: EndEvent | null = null;
  /** The close under way: a stop (Ctrl+C) and the episode's own end can race, and a trace closes once. */
  private closing: Promise<void> | null = null;
  private history: TraceEvent[];
  private conv: Conversation;
  /** Events that arrived while a step ran or before the branch was open. */
  readonly queued: NewTraceEvent[] = [];
  private readonly listeners = new Listeners<[TraceEvent]>();

  constructor(
    private readonly branch: RecordedBranch,
    writer: TraceWriter | null,
    inherited: readonly TraceEvent[],
  ) {
    this.writer = writer;
    this.history = [...inherited];
    this.conv = conversationFromEvents(branch.task, this.history);
  }

  /** Every event of the branch so far (ancestry included). */
  get events(): TraceEvent[] {
    return this.history;
  }

  /** The conversation after the events so far. */
  get conversation(): Conversation {
    return this.conv;
  }

  /** The end event once the branch is closed, else null. */
  ended(): EndEvent | null {
    return this.endEvent;
  }

  /** Whether a branch is open to record in. */
  isOpen(): boolean {
    return this.writer !== null;
  }

  /** Commits (fsyncs) the step's events, the event loop free meanwhile; 0 ms when no branch is open. */
  commitStep(): Promise<number> {
    return this.writer?.commit() ?? Promise.resolve(0);
  }

  /** Every event so far, then each new one. */
  onEvent(listener: (event: TraceEvent) => void): () => void {
    for (const e of this.history) listener(e);
    return this.listeners.add(listener);
  }

  /** The one place events are recorded: trace, conversation, history, listeners. */
  record(event: NewTraceEvent): TraceEvent {
    if (!this.writer) throw new HarnessError('conflict', `no open branch to record ${event.type} in`);
    const written = this.writer.append(event);
    this.conv.apply(written);
    this.history.push(written);
    this.listeners.emit(written);
    return written;
  }

  /** Records now when `now` and a branch is open; else holds the event for the next step. */
  recordOrQueue(event: NewTraceEvent, now: boolean): void {
    if (!now || !this.writer) this.queued.push(event);
    else this.record(event);
  }

  /** Ends the episode: verifier in a fresh shell, final reward, status by the Contracts. */
  async finish(endReason: string): Promise<StopReason & { kind: 'ended' }> {
    const task = this.branch.task;
    const verifier: VerifierResult | null = await runVerifier(task, this.branch.sandbox());
    // Stopped while the verifier ran: the branch closed as interrupted meanwhile.
    if (!this.writer || this.closing) {
      await this.closing;
      return { kind: 'ended', message: 'stopped' };
    }
    const fin = finalReward(verifier?.reward ?? verifier?.success ?? null, task.rewards.components);
    this.record({
      type: 'reward',
      step: this.branch.currentStep(),
      source: 'harness',
      components: fin.components,
      total: fin.total,
      final: true,
    });
    const status = episodeStatus(endReason, verifier);
    await this.close(status, endReason, verifier, fin.total);
    return { kind: 'ended', message: `${status}: ${endReason}`, end: { status, end_reason: endReason } };
  }

  /**
   * A fatal error: `error` event with the last 3 tool payloads and the memory, then status
   * `error`. `step`: the step it happened in (a step under way when it failed, e.g. its
   * snapshot), else the last complete one.
   */
  async endFatal(
    fatal: Fatal,
    details?: Record<string, unknown>,
    step: number = this.branch.currentStep(),
  ): Promise<StopReason & { kind: 'ended' }> {
    if (this.endEvent || !this.writer || this.closing) {
      await this.closing;
      return { kind: 'ended', message: fatal.message };
    }
    log.error(`episode ${this.branch.episode}: ${fatal.code}: ${fatal.message}`);
    this.record({
      type: 'error',
      step,
      source: 'harness',
      code: fatal.code,
      message: fatal.message,
      fatal: true,
      context: { ...this.branch.fatalContext(), ...(details ?? {}) },
    });
    await this.close('error', fatal.code, null, 0);
    return {
      kind: 'ended',
      message: `error: ${fatal.code}: ${fatal.message}`,
      end: { status: 'error', end_reason: fatal.code, detail: fatal.message },
    };
  }

  /** Records what an exec: agent's process wrote since the last call as step `step`'s output (`agent_output`). */
  recordAgentOutput(step: number): void {
    const out = this.branch.currentAgent().needs.process?.takeOutput();
    if (out && this.writer) this.record({ type: 'agent_output', step, source: 'agent', ...out });
  }

  /**
   * Closes the open branch with its end event (the writer's next seq); no-op when none is
   * open. A close asked for while one is under way waits for that one (its end stands).
   */
  close(
    status: EpisodeStatus,
    endReason: string,
    verifier: VerifierResult | null,
    finalTotal: number,
    /** False when a rollback closes the abandoned branch: listeners follow the live one. */
    notify = true,
  ): Promise<void> {
    if (this.closing) return this.closing;
    if (!this.writer) return Promise.resolve();
    this.closing = this.closeNow(status, endReason, verifier, finalTotal, notify).finally(() => {
      this.closing = null;
    });
    return this.closing;
  }

  private async closeNow(
    status: EpisodeStatus,
    endReason: string,
    verifier: VerifierResult | null,
    finalTotal: number,
    notify: boolean,
  ): Promise<void> {
    if (!this.writer) return;
    const step = this.branch.currentStep();
    const fields = {
      status,
      end_reason: endReason,
      verifier,
      steps: step,
      return: episodeReturn(this.history, step, finalTotal, this.branch.task.rewards.gamma),
      step,
    };
    const writer = this.writer;
    // An agent running a process of its own (exec:) is stopped with the branch; what it wrote last is kept.
    await this.branch.currentAgent().needs.process?.dispose(endReason);
    this.recordAgentOutput(step);
    // What the agent noted after its last decision (a final answer re-sent to a retry).
    for (const note of this.branch.currentAgent().needs.process?.takeNotes() ?? []) this.record(note);
    // The end event's seq is the writer's next one (FileTraceWriter exposes it).
    const seq = (writer as { seq?: number }).seq ?? -1;
    this.writer = null;
    await writer.close(fields);
    const end: EndEvent = { ...fields, type: 'end', source: 'harness', seq, t: Date.now() };
    this.endEvent = end;
    if (!notify) return;
    this.listeners.emit(end);
  }

  /** Stopped: the open branch closes as `interrupted`; one never opened just ends. */
  async interrupt(endReason: string): Promise<EndEvent> {
    await this.closing;
    if (this.endEvent) return this.endEvent;
    if (this.writer) await this.close('interrupted', endReason, null, 0);
    else
      this.endEvent = {
        type: 'end',
        source: 'harness',
        seq: -1,
        t: Date.now(),
        step: this.branch.currentStep(),
        status: 'interrupted',
        end_reason: endReason,
        verifier: null,
      };
    return this.endEvent as EndEvent;
  }

  /**
   * After a rollback: no branch open, the history cut to `kept`, the conversation rebuilt,
   * held events dropped. Returns whether the branch had ended (the loop then re-arms).
   */
  rewind(kept: TraceEvent[]): boolean {
    const wasEnded = this.endEvent !== null;
    this.writer = null;
    this.history = kept;
    this.conv = conversationFromEvents(this.branch.task, kept);
    this.queued.length = 0;
    this.endEvent = null;
    return wasEnded;
  }

  /** Records into a newly created branch from here on. */
  open(writer: TraceWriter): void {
    this.writer = writer;
    this.endEvent = null;
  }
}
