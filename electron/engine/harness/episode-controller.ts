import type { Breakpoint } from '../../../shared/breakpoints.js';
import type { RolledBack, StopEnd } from '../../../shared/contract/models.js';
import type { HeldAction, StopPoints } from '../../../shared/held-action.js';
import type { EndEvent, TraceEvent } from '../../../shared/trace-events.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { CallerAgentOptions } from '../agents/agent-spec.js';
import type { Sandbox } from '../sandbox/sandbox.js';

/** The stepper's state, as a debugger's. */
export type ControllerState = 'idle' | 'running' | 'paused' | 'ended';

/**
 * What stopped a run: a breakpoint hit (with why), a pause, a step done, the end, or a
 * stop inside a step — before the model's answer reaches the agent, or before the
 * decided tools run — with the decided action `held`.
 */
export interface StopReason {
  readonly kind: 'breakpoint' | 'paused' | 'step' | 'ended' | 'before_answer' | 'before_tool';
  readonly breakpoint?: Breakpoint;
  readonly message?: string;
  readonly held?: HeldAction;
  /** With kind `ended`, when the episode closed with an end event: how (the contract's `StopEnd`). */
  readonly end?: StopEnd;
  /** Paused by a rollback: the branch it left, the step, and what of a person's it dropped. */
  readonly rollback?: RolledBack;
}

/** A piece of an `exec:` agent's own output, live, with the step it belongs to (the one running). */
export interface AgentOutputChunk {
  readonly step: number;
  readonly stream: 'stdout' | 'stderr';
  readonly data: string;
  /** True on the chunk that reached the step's cap: the rest of the step's stream is dropped. */
  readonly truncated: boolean;
}

/** How a rollback leaves the controller. */
export interface RollbackOptions {
  /**
   * Create the new branch now, paused at the step, instead of on the next step: the window
   * shows it at once (issue 33, item 3), as it does a fork or a reopen.
   */
  readonly branchNow?: boolean;
}

/**
 * A live episode branch, steppable like a debugger. The CLI's `--step` mode, the
 * contract services behind the UI and the tests all drive episodes through this.
 */
export interface EpisodeController {
  readonly episode: string;
  readonly branch: string;
  state(): ControllerState;
  /** The last completed step (0 after setup). */
  currentStep(): number;
  /** The live sandbox, or null once destroyed. */
  sandbox(): Sandbox | null;
  /** Every event of this branch so far, and each new one as it is appended. */
  onEvent(listener: (event: TraceEvent) => void): () => void;
  onState(listener: (state: ControllerState, reason?: StopReason) => void): () => void;
  /** An exec: agent's own stdout/stderr as it is written (other agents write none). */
  onAgentOutput?(listener: (chunk: AgentOutputChunk) => void): () => void;

  /** One step (F10). */
  step(): Promise<StopReason>;
  /** Continue until a breakpoint, a pause or the end (F5). */
  run(): Promise<StopReason>;
  /** Pause after the current step. */
  pause(): void;
  /**
   * Stop the episode (Shift+F5): closes the trace as `interrupted` with end_reason `stopped`,
   * or the reason given (the episode went on elsewhere: a picked candidate, a fork).
   */
  stop(endReason?: string): Promise<EndEvent>;
  setBreakpoints(breakpoints: readonly Breakpoint[]): void;
  breakpoints(): readonly Breakpoint[];

  /** Where the stepper also stops inside a step (before the answer, before the tools); returns them all. */
  setStopPoints(points: Partial<StopPoints>): StopPoints;
  stopPoints(): StopPoints;
  /** The step held at a stop inside it (decided, not yet delivered or run), or null. */
  held(): HeldAction | null;
  /** Edits the held answer before the agent gets it (content and/or tool calls); recorded as a person's edit. */
  editAnswer(message: unknown): HeldAction;
  /** Edits a held call's arguments before it runs (checked against the tool's schema); recorded as a person's edit. */
  editArguments(callId: string, args: unknown): HeldAction;
  /** Gives a held call's result instead of running it: the tool does not run; the agent sees this result. */
  replaceResult(callId: string, result: ToolResult): HeldAction;

  /** Inject a system or user message; the agent sees it before its next decision. */
  inject(role: 'system' | 'user', content: string): void;
  /** Override the last tool result before the agent sees it (the tool ran; the trace keeps both). */
  overrideLastResult(shown: ToolResult): void;
  /**
   * Restore workspace, memory, conversation and cwd/env to just after step k in the live
   * sandbox; continuing creates a branch, or (`branchNow`) the branch is created at once.
   * Resolves with what it left and dropped of a person's (the pause's `reason.rollback` too).
   */
  rollbackTo(step: number, options?: RollbackOptions): Promise<RolledBack>;
  /**
   * Fork at step k into a new branch (own id, own trace), optionally with another agent and
   * its own settings (a model source for an exec: agent, an endpoint…).
   */
  fork(step: number, agentSpec?: string, agentOptions?: CallerAgentOptions): Promise<EpisodeController>;
  /** Current memory. */
  memory(): Record<string, unknown>;
  /** Leaves or destroys the sandbox; the trace stays. */
  dispose(options?: { keepSandbox?: boolean }): Promise<void>;
}
