import { randomBytes } from 'node:crypto';
import { assertNever } from '../../../shared/assert-never.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { NewTraceEvent } from '../trace/trace-store.js';
import { AgentEnded, AgentFailure } from '../agents/agent.js';
import type {
  Agent,
  AgentDivergence,
  AgentNeeds,
  ChatMessage,
  DecideContext,
  DecideInput,
  Decision,
  DriftedStep,
  Reexecution,
} from '../agents/agent.js';
import { assistantMessage } from '../harness/conversation.js';
import { Listeners } from '../harness/listeners.js';
import { writtenSince, type AgentExit, type AgentOutput, type OutputListener } from './agent-process.js';
import { ModelEndpoint, type AssistantAnswer, type ModelCall } from './model-endpoint.js';

// What the two agents that run a program of their own share (exec: on the host, ExecAgent;
// sandbox: inside the sandbox, SandboxAgent): how their process is waited for, answered and
// ended. Each keeps only what differs (where the process runs, who runs the tools).

/** How long an agent may take to exit after a final answer before the episode ends without it. */
export const FINAL_EXIT_GRACE_MS = 10_000;
/** How long an agent may take to exit after the endpoint told it the episode ended. */
export const END_GRACE_MS = 1_000;

/** An agent's process as both kinds have it: its exit, its output per step, a stop of everything it started. */
export interface ProgramProcess {
  readonly exited: Promise<AgentExit>;
  takeOutput(): AgentOutput;
  stop(): Promise<void>;
}

/** Something that ends a wait for the agent's next model call. */
export type Wake =
  | { kind: 'call'; call: ModelCall }
  | { kind: 'exit'; exit: AgentExit }
  | { kind: 'deadline' }
  | { kind: 'diverged'; failure: AgentFailure };

/**
 * An agent that runs a program of its own, answered at its model endpoint (exec:, sandbox:):
 * the endpoint and its token, the source that answers (`--model`), the answer held until the
 * harness delivers it, the process's output and its end. Subclasses start the process
 * (`launch`) and say what else ends with it.
 */
export abstract class ProgramAgent<P extends ProgramProcess> {
  protected readonly token = randomBytes(24).toString('base64url');
  protected endpoint: ModelEndpoint | null = null;
  protected proc: P | null = null;
  /** A model call that came early (while waiting for an exit or for tool outputs): answered next. */
  protected stashed: ModelCall | null = null;
  /** The step each answered model call answered (a re-sent answer's warning names it). */
  private readonly answeredStep = new WeakMap<ModelCall, number>();
  /** The model call whose answer waits for the harness to deliver it. */
  protected readonly undelivered = new HeldAnswer((call, step) => this.answeredStep.set(call, step));
  /** Events to record before the next step's request (Decision.notes): drift, auxiliary calls, re-sent answers. */
  protected notes: NewTraceEvent[] = [];
  protected disposed = false;
  protected readonly outputListeners = new Listeners<Parameters<OutputListener>>();
  /** A process of its own that re-executes a recording; its position is its model source's. */
  readonly needs: AgentNeeds = { inside: null, reexecution: this, process: this, position: this };

  constructor(
    readonly spec: string,
    /** What answers the model calls (`--model`). */
    readonly source: Agent,
    /** The model name to serve instead of the source's (a replay serves the recorded one). */
    private readonly servedModel?: string,
  ) {}

  /** The episode's model endpoint for this agent; an answer sent again to a retry is noted. */
  protected newEndpoint(): ModelEndpoint {
    return new ModelEndpoint(this.token, this.modelName, (call, times) => {
      const step = this.answeredStep.get(call) ?? 0;
      this.notes.push({
        type: 'warning',
        step,
        source: 'harness',
        code: 'answer_resent',
        message: `the agent asked again for the answer of step ${step} with an identical request (a client retrying a dropped connection): the same answer was re-sent (${times}×), not recorded again and no model answer spent`,
      });
    });
  }

  /**
   * Answers `call` with the answer of `step` (a fast-forward's recorded one, an auxiliary
   * call's), as the agent gets every answer ({@link toAnswer}).
   */
  protected answerAt(
    call: ModelCall,
    answer: { content: string | null; tool_calls?: unknown },
    step: number,
  ): void {
    this.answeredStep.set(call, step);
    call.answer(toAnswer(answer, step));
  }

  /**
   * A re-execution of the recording (`replay --verify`) run by `run`: a divergence thrown
   * ends it as found, with the steps that drifted so far; the process is disposed after.
   */
  protected async reexecution(
    run: () => Promise<Reexecution>,
    drift: readonly DriftedStep[],
  ): Promise<Reexecution> {
    try {
      return await run();
    } catch (e) {
      const divergence = divergenceOf(e);
      if (divergence) return { drift, divergence };
      throw e;
    } finally {
      await this.dispose('replayed');
    }
  }

  /** The model name the endpoint serves (`STEPBOX_MODEL`). */
  get modelName(): string {
    return servedModelName(this.source, this.servedModel);
  }

  /** The agent's stdout and stderr as they are written (the window streams them); returns an unsubscribe. */
  onOutput(listener: OutputListener): () => void {
    return this.outputListeners.add(listener);
  }

  /** What the process wrote since the last call (the harness records it per step), or null when nothing. */
  takeOutput(): AgentOutput | null {
    return writtenSince(this.proc);
  }

  /** Notes no decision carried yet (a re-sent final answer): recorded as the branch closes. */
  takeNotes(): readonly NewTraceEvent[] {
    return this.notes.splice(0);
  }

  /** Decisions made so far: the model source's (its cursor), for rollbacks and forks. */
  consumed(): number {
    return this.source.needs.position?.consumed() ?? 0;
  }

  /** Re-executes the recording for `replay --verify` (each kind its own way; see {@link reexecution}). */
  abstract reexecute(ctx: DecideContext, steps: number, tools: readonly OpenAiTool[]): Promise<Reexecution>;

  /** Answers what waits with `episode_ended`, gives the process a moment, then stops it and the endpoint. */
  async dispose(reason: string): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.endpoint?.end(reason);
    this.stashed?.fail(409, 'episode_ended', `stepbox: the episode has ended (${reason}); exit now`);
    this.stashed = null;
    this.undelivered.end(reason);
    this.beforeStop(reason);
    await endProcess(this.proc);
    await this.endpoint?.close();
    await this.afterStop();
  }

  /** What else is told the episode ended before the process stops (exec: its held tool calls). */
  protected beforeStop(_reason: string): void {}

  /** What else closes after the process (exec: its MCP server, its task file). */
  protected async afterStop(): Promise<void> {}

  /**
   * The source's decision for the agent's model call `call` at step `input.step`, to be
   * delivered by the harness; `request` is what the source was asked, `meta` the step's extra
   * `model_request` fields beside the API and the injections.
   */
  protected async decideFor(
    call: ModelCall,
    input: DecideInput,
    ctx: DecideContext,
    messages: ChatMessage[],
    injected: number,
    meta: Record<string, unknown> = {},
  ): Promise<Decision> {
    const decision = await askSource(this.source, call, input, messages);
    const notes = this.notes.splice(0);
    return {
      ...decision,
      ...(notes.length > 0 ? { notes } : {}),
      deliver: this.undelivered.hold(call, input.step, decision.usage, () => this.awaitExitAfterFinal(ctx)),
      request: { ...call.body, messages },
      requestMeta: {
        api: call.api,
        ...(call.api !== 'chat.completions' ? { received: call.raw } : {}),
        injected,
        ...meta,
        ...(decision.request !== undefined ? { forwarded: decision.request } : {}),
      },
    };
  }

  /** The agent's process and endpoint, which every wait below needs (launched before any). */
  private running(): { proc: P; endpoint: ModelEndpoint } {
    if (!this.proc || !this.endpoint)
      throw new AgentFailure(
        'agent_error',
        'the agent is not running (it was not launched, or it was disposed)',
      );
    return { proc: this.proc, endpoint: this.endpoint };
  }

  /**
   * After a re-run of the recording (`replay --verify`) the last answer went out: waits for the
   * process's exit, its next model call or the grace; the call, else null.
   */
  protected async callOrExit(): Promise<ModelCall | null> {
    const stop = new AbortController();
    try {
      const { proc, endpoint } = this.running();
      return await Promise.race([
        proc.exited.then(() => null),
        endpoint.next(stop.signal).catch(() => null),
        delay(FINAL_EXIT_GRACE_MS).then(() => null),
      ]);
    } finally {
      stop.abort();
    }
  }

  /** Waits for the agent's next model call ({@link waitForCall}) for at most `ms`. */
  protected waitForCall(
    ms: number,
    signal?: AbortSignal,
    also: readonly Promise<Wake>[] = [],
  ): Promise<Wake> {
    const { proc, endpoint } = this.running();
    return waitForCall(endpoint, proc, ms, signal, also);
  }

  /** After a final answer the agent should exit: a non-zero exit is an agent error, a new model call is kept. */
  private async awaitExitAfterFinal(ctx: DecideContext): Promise<void> {
    const { proc, endpoint } = this.running();
    this.stashed = await exitAfterFinal(proc.exited, endpoint, ctx.episodeLeftMs);
  }
}

/** The model name an agent's endpoint serves (`STEPBOX_MODEL`): the given one, else the source's. */
export function servedModelName(source: Agent, served?: string): string {
  if (served) return served;
  const named = source.describe().model;
  return typeof named === 'string' && named !== '' ? named : `stepbox-${source.kind}`;
}

/**
 * Waits for the agent's next model call at `endpoint`; its exit, `ms`, an abort of `signal`
 * (rejects as `stopped`) or one of `also` (a divergence found meanwhile) ends the wait.
 */
export async function waitForCall(
  endpoint: ModelEndpoint,
  proc: ProgramProcess,
  ms: number,
  signal: AbortSignal | undefined,
  also: readonly Promise<Wake>[] = [],
): Promise<Wake> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race<Wake>([
      endpoint.next(stop.signal).then((call) => ({ kind: 'call', call })),
      proc.exited.then((exit) => ({ kind: 'exit', exit })),
      new Promise<Wake>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'deadline' }), Math.max(1, ms));
      }),
      ...also,
      new Promise<Wake>((_, reject) => {
        stop.signal.addEventListener('abort', () =>
          reject(new AgentFailure('stopped', 'the agent was stopped while waiting for its model call')),
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

/** Why a wait that brought no model call ends the episode: the agent's exit, its time, a divergence. */
export function wakeFailure(wake: Exclude<Wake, { kind: 'call' }>, ctx: DecideContext): Error {
  switch (wake.kind) {
    case 'exit':
      return exitOutcome(wake.exit);
    case 'diverged':
      return wake.failure;
    case 'deadline': {
      const stepMs = ctx.task.timeouts.step_hard * 1000;
      if (ctx.episodeLeftMs <= stepMs)
        return new AgentEnded('episode_timeout', 'the episode timeout passed while the agent was working');
      return new AgentFailure(
        'agent_timeout',
        `the agent made no model call within the hard step timeout (${ctx.task.timeouts.step_hard} s)`,
      );
    }
    default:
      return assertNever(wake, 'wake');
  }
}

/**
 * Asks the model source the agent's model call `call` (its messages as sent on); a failure
 * of the source answers the call too (502), so the agent is not left waiting.
 */
export async function askSource(
  source: Agent,
  call: ModelCall,
  input: DecideInput,
  messages: ChatMessage[],
): Promise<Decision> {
  const tools = call.tools;
  try {
    return await source.decide({ step: input.step, messages, tools, signal: input.signal });
  } catch (e) {
    call.fail(
      502,
      'model_source_failed',
      `stepbox: the model source failed: ${e instanceof Error ? e.message : String(e)}`,
    );
    throw e;
  }
}

/**
 * A model call whose answer waits for the harness to deliver it (after a stop before the
 * answer or the tools, with a person's edit applied), so what the agent gets is what is recorded.
 */
export class HeldAnswer {
  private call: ModelCall | null = null;

  constructor(
    /** Told which step each delivered answer answered. */
    private readonly onAnswered: (call: ModelCall, step: number) => void = () => undefined,
  ) {}

  /** The `deliver` of a decision for `call` at `step`: answers it once; after a final answer, `afterFinal`. */
  hold(
    call: ModelCall,
    step: number,
    usage: unknown,
    afterFinal: () => Promise<void>,
  ): NonNullable<Decision['deliver']> {
    this.call = call;
    return async (message) => {
      if (this.call !== call) return;
      this.call = null;
      const answer = toAnswer(message, step);
      this.onAnswered(call, step);
      call.answer(answer, usage);
      if (!answer.tool_calls) await afterFinal();
    };
  }

  /** Tells a held call the episode ended (the agent is to exit). */
  end(reason: string): void {
    this.call?.fail(409, 'episode_ended', `stepbox: the episode has ended (${reason}); exit now`);
    this.call = null;
  }
}

/** Gives the process a moment to exit after the endpoint said the episode ended, then stops it. */
export async function endProcess(proc: ProgramProcess | null): Promise<void> {
  if (!proc) return;
  await Promise.race([proc.exited, delay(END_GRACE_MS)]);
  await proc.stop();
}

/** The messages stepbox adds to the agent's next request: injections and warnings recorded after step `step`. */
export function injectionsAfter(history: readonly TraceEvent[], step: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const e of history) {
    if (e.step !== step) continue;
    if (e.type === 'injected') out.push({ role: e.role, content: e.content });
    else if (e.type === 'warning' && e.observation)
      out.push({ role: 'user', content: `[stepbox warning] ${e.message}` });
  }
  return out;
}

/** A model answer as the agent gets it: tool calls with ids and string arguments. */
export function toAnswer(
  message: { content: string | null; tool_calls?: unknown },
  step: number,
): AssistantAnswer {
  const m = assistantMessage(message, step);
  return m.tool_calls && m.tool_calls.length > 0
    ? { content: m.content, tool_calls: m.tool_calls }
    : { content: m.content ?? '' };
}

/**
 * After a final answer the agent should exit (exec: and sandbox: agents alike): waits up to
 * the grace period; a non-zero exit is an agent error; a model call made meanwhile is
 * returned to be answered next.
 */
export async function exitAfterFinal(
  exited: Promise<AgentExit>,
  endpoint: ModelEndpoint,
  episodeLeftMs: number,
): Promise<ModelCall | null> {
  const stop = new AbortController();
  const ms = Math.max(1, Math.min(episodeLeftMs, FINAL_EXIT_GRACE_MS));
  try {
    const wake = await Promise.race([
      exited.then((exit) => ({ kind: 'exit' as const, exit })),
      endpoint
        .next(stop.signal)
        .then((call) => ({ kind: 'call' as const, call }))
        .catch(() => ({ kind: 'none' as const })),
      delay(ms).then(() => ({ kind: 'none' as const })),
    ]);
    if (wake.kind === 'exit' && wake.exit.code !== 0) throw exitOutcome(wake.exit);
    return wake.kind === 'call' ? wake.call : null;
  } finally {
    stop.abort();
  }
}

/** Exit 0 ends the episode normally (the verifier runs); anything else is `agent_exit` with the stderr tail. */
export function exitOutcome(exit: AgentExit): Error {
  if (exit.code === 0) return new AgentEnded('agent_exited', 'the agent exited 0');
  const how = exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal}`;
  return new AgentFailure(
    'agent_exit',
    `the agent ${how}; its last stderr: ${exit.stderrTail.trim() || '(empty)'}`,
    {
      exit_code: exit.code,
      signal: exit.signal,
      stderr_tail: exit.stderrTail,
    },
  );
}

/** The failure that ends a branch whose re-run agent asked what the recording cannot answer. */
export function diverged(
  step: number,
  what: string,
  diff: { field: string; recorded: unknown; actual: unknown },
): AgentFailure {
  return new AgentFailure(
    'diverged',
    `diverged at step ${step}: the agent's ${what} differs from the recording at ${diff.field}`,
    { diverged_at: step, field: diff.field, recorded: diff.recorded, actual: diff.actual },
  );
}

/** The divergence a `diverged` failure (see {@link diverged}) carries, or null for any other error. */
export function divergenceOf(e: unknown): AgentDivergence | null {
  if (!(e instanceof AgentFailure) || e.endReason !== 'diverged' || !e.details) return null;
  const { diverged_at: step, field, recorded, actual } = e.details;
  return typeof step === 'number' && typeof field === 'string' ? { step, field, recorded, actual } : null;
}

/** Resolves after `ms` without keeping the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
