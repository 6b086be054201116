import type { Task } from '../../../shared/task.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ToolCall, TraceEvent } from '../../../shared/trace-events.js';
import type { AgentFiles } from '../sandbox/agent-files.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import type { NewTraceEvent } from '../trace/trace-store.js';
import type { AgentOutput, OutputListener } from './agent-output.js';

export type { ChatMessage } from '../model-api/chat-message.js';
import type { ChatMessage } from '../model-api/chat-message.js';

/** What an agent sees when deciding step `step`. */
export interface DecideInput {
  readonly step: number;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly OpenAiTool[];
  readonly signal?: AbortSignal;
  /** What an agent running outside the harness (`exec:`) needs to know about the episode. */
  readonly context?: DecideContext;
}

/** The episode around a decision, for agents that run a process of their own. */
export interface DecideContext {
  readonly episode: string;
  readonly task: Task;
  readonly taskPath: string | null;
  /** Every event of the branch so far (ancestry included): what fast-forward answers from. */
  readonly history: readonly TraceEvent[];
  /** What is left of the episode's time budget, ms. */
  readonly episodeLeftMs: number;
  /** The episode's sandbox and snapshot store (an agent inside the sandbox runs there). */
  readonly sandbox?: Sandbox;
  readonly snapshots?: SnapshotStore;
}

/**
 * The tool calls of an answer run by the agent itself (an agent inside the sandbox): resolves
 * with what each returned, by call id, once the agent reported them (its next request) or
 * could not (it exited, the step's time ran out: those calls get an error result).
 */
export type ExternalTools = (
  calls: readonly ToolCall[],
  hardMs: number,
) => Promise<ReadonlyMap<string, ToolResult>>;

/** A decision: the raw model output, kept apart from its parse (the harness parses). */
export interface Decision {
  /** The raw text of the output (content, plus tool calls as the model wrote them). */
  readonly raw: string;
  /** The assistant message as returned (content and/or tool_calls with string arguments). */
  readonly message: { content: string | null; tool_calls?: unknown };
  /** The exact request sent to a model, if any (never the API key). */
  readonly request?: unknown;
  readonly usage?: unknown;
  readonly logprobs?: unknown;
  readonly latencyMs?: number;
  /** The endpoint's id, model and finish reasons of this answer, when it gave them. */
  readonly response?: { id?: string; model?: string; finish_reasons?: string[] };
  /** Extra fields of the `model_request` event (an exec agent's injected count, the API it used). */
  readonly requestMeta?: Record<string, unknown>;
  /**
   * Sends the answer to an agent running a process of its own (exec:), called by the
   * harness once the answer is final (after a stop before the answer or the tools, with
   * a person's edit applied): what is sent is what is recorded. Absent for agents that
   * live in the harness.
   */
  readonly deliver?: (message: { content: string | null; tool_calls?: unknown }) => Promise<void>;
  /** The tools the agent offered the model: the answer is parsed, and edits checked, against these (sandbox:). */
  readonly tools?: readonly OpenAiTool[];
  /** Set when the agent runs the answer's tool calls itself (sandbox:): the harness records, never runs, them. */
  readonly external?: ExternalTools;
  /** Events to record before the step's request: auxiliary model calls, drift found while re-running. */
  readonly notes?: readonly NewTraceEvent[];
}

/** Where a re-run agent asked what its recording cannot answer. */
export interface AgentDivergence {
  readonly step: number;
  /** The first path of the request (or tool call) that differs, e.g. `messages[0].content`. */
  readonly field: string;
  readonly recorded: unknown;
  readonly actual: unknown;
}

/** A step whose tool outputs or workspace differed when the agent re-ran its own tools (sandbox:). */
export interface DriftedStep {
  readonly step: number;
  /** The calls whose output differs (recorded → re-run). */
  readonly calls: readonly { call_id: string; name: string; recorded: string; actual: string }[];
  /** The workspace's tree hash after the step, when it differs from snapshot `step`'s. */
  readonly workspace: { readonly recorded: string; readonly actual: string } | null;
}

/** What an agent found re-executing a recorded branch against its recording (`replay --verify`). */
export interface Reexecution {
  /** Steps that differed as the agent re-ran them (the re-run went on). */
  readonly drift: readonly DriftedStep[];
  /** Where it asked what the recording cannot answer (its re-run stopped there), or null. */
  readonly divergence: AgentDivergence | null;
}

/** Why an agent could not decide: ends the episode with status `error`. */
export class AgentFailure extends Error {
  constructor(
    /** e.g. `script_exhausted`, `script_error`, `model_error`, `context_overflow`. */
    readonly endReason: string,
    message: string,
    /** Structured detail kept in the `error` event's context (e.g. `diverged_at`, an agent's stderr). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AgentFailure';
  }
}

/**
 * A model endpoint that failed after its retries (`model_error`): its last error as one
 * sentence, then what to check. The client's own messages end in a period ("Connection
 * error."), which made "failed: Connection error.. Check".
 */
export function modelEndpointFailure(baseUrl: string, lastError: string, check: string): AgentFailure {
  const said = lastError.trim().replace(/[.\s]+$/, '');
  return new AgentFailure('model_error', `the model endpoint ${baseUrl} failed: ${said}. Check ${check}`);
}

/** The agent ended the episode without a failure (its process exited 0, its time ran out): the verifier runs. */
export class AgentEnded extends Error {
  constructor(
    /** `agent_exited` or `episode_timeout`. */
    readonly endReason: string,
    message: string,
  ) {
    super(message);
    this.name = 'AgentEnded';
  }
}

/** The hook of an agent that starts inside the sandbox (sandbox:, recipes). */
export interface StartsInside {
  /** The files it needs at /opt/agent (the sandbox is created with them), or null when it needs none. */
  insideFiles(): AgentFiles | null;
}

/** How an agent re-executes a recorded branch for `replay --verify` (exec:, sandbox:). */
export interface Reexecutes {
  /**
   * A new process answered from the recording of `ctx.history`'s `steps` steps (its tools
   * re-run in `ctx.sandbox` when it runs them itself): what drifted and where it diverged.
   */
  reexecute(ctx: DecideContext, steps: number, tools: readonly OpenAiTool[]): Promise<Reexecution>;
}

/** A process of the agent's own (exec:, sandbox:): its output as written, its notes, its stop. */
export interface OwnProcess {
  /** The process's output as it is written; returns an unsubscribe. */
  onOutput(listener: OutputListener): () => void;
  /** What the process wrote since the last call, or null when it wrote nothing. */
  takeOutput(): AgentOutput | null;
  /** Notes made since the last decision that no next decision will carry (the branch is closing). */
  takeNotes(): readonly NewTraceEvent[];
  /** Stops the process and what it started; `reason` is the end reason. */
  dispose(reason: string): Promise<void>;
}

/** Where an agent that plays a script or a recording stands (scripted:, replay:, a program's model source). */
export interface HoldsPosition {
  /** Decisions made so far, skipped ones included: a rollback or fork rebuilds it past them. */
  consumed(): number;
}

/**
 * What an agent needs from the harness beyond deciding, each a small named capability it
 * has or says it lacks (null): the harness asks these, never the agent's kind.
 */
export interface AgentNeeds {
  readonly inside: StartsInside | null;
  readonly reexecution: Reexecutes | null;
  readonly process: OwnProcess | null;
  readonly position: HoldsPosition | null;
}

/** The needs of an agent that decides inside the harness and holds no position (a model, a person). */
export const NEEDS_NOTHING: AgentNeeds = { inside: null, reexecution: null, process: null, position: null };

/**
 * Decides the next action from the observations so far. What its kind needs from the
 * harness (how it is rewound, how it is replayed) is its driver's (agent-driver.ts); what
 * this agent needs beyond deciding is its `needs`.
 */
export interface Agent {
  /** The spec it was made from, e.g. `scripted:agent.jsonl`. */
  readonly spec: string;
  readonly kind:
    'scripted' | 'replay' | 'openai' | 'anthropic' | 'gemini' | 'manual' | 'exec' | 'sandbox' | 'oracle';
  /** Its capabilities beyond deciding: to start inside the sandbox, to re-execute, a process, a position. */
  readonly needs: AgentNeeds;
  decide(input: DecideInput): Promise<Decision>;
  /** Parameters worth recording in the header (model, temperature, seed, base URL). */
  describe(): Record<string, unknown>;
}
