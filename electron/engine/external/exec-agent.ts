import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { toolFailure, type ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import {
  AgentEnded,
  AgentFailure,
  type Agent,
  type ChatMessage,
  type DecideContext,
  type DecideInput,
  type Decision,
} from '../agents/agent.js';
import { assertNever } from '../../../shared/assert-never.js';
import { assistantMessage } from '../harness/conversation.js';
import { Listeners } from '../harness/listeners.js';
import {
  AgentProcess,
  agentEnvironment,
  type AgentExit,
  type AgentOutput,
  type OutputListener,
} from './agent-process.js';
import {
  recordedStep,
  requestDifference,
  sameCall,
  toolAnswersAt,
  type RecordedToolAnswer,
} from './fast-forward.js';
import { McpHttpServer } from './mcp-server.js';
import { ModelEndpoint, type AssistantAnswer, type ModelCall } from './model-endpoint.js';

/** How long an agent may take to exit after a final answer before the episode ends without it. */
const FINAL_EXIT_GRACE_MS = 10_000;
/** How long an agent may take to exit after the endpoint told it the episode ended. */
const END_GRACE_MS = 1_000;

/** A tool call of the agent, waiting for the step whose results answer it. */
interface HeldCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly resolve: (r: ToolResult) => void;
}

/** The results the agent's tool calls are answered from now. */
interface AnswerPool {
  readonly step: number;
  readonly answers: RecordedToolAnswer[];
  /** During fast-forward a call that is not in the recording is a divergence. */
  readonly fastForward: boolean;
}

/** Something that ends a wait for the agent's next model call. */
type Wake =
  | { kind: 'call'; call: ModelCall }
  | { kind: 'exit'; exit: AgentExit }
  | { kind: 'deadline' }
  | { kind: 'diverged'; failure: AgentFailure };

/**
 * The user's own agent program (`exec:CMD`), stepped through the two servers of the
 * contract: its model calls arrive at the episode's model endpoint and are answered by
 * the model source (`--model`); its tool calls arrive at the MCP server. stepbox runs
 * the tool calls of the model's answer through the harness (so pausing, overrides,
 * faults, snapshots and replay work as for every agent) and answers each MCP call with
 * the matching result the harness recorded, once the step is done. A new process
 * (a fork, a rollback) is fast-forwarded: its first model and tool calls are answered
 * from the recording, and one that differs stops it as `diverged`.
 */
export class ExecAgent implements Agent {
  readonly kind = 'exec' as const;
  private readonly token = randomBytes(24).toString('base64url');
  private endpoint: ModelEndpoint | null = null;
  private mcp: McpHttpServer | null = null;
  private proc: AgentProcess | null = null;
  private tools: readonly OpenAiTool[] = [];
  private pool: AnswerPool | null = null;
  private held: HeldCall[] = [];
  private stashed: ModelCall | null = null;
  /** The model call whose answer waits for the harness to deliver it. */
  private undelivered: ModelCall | null = null;
  private divergence: AgentFailure | null = null;
  private wakeDivergence: ((f: AgentFailure) => void) | null = null;
  private tempDir: string | null = null;
  private disposed = false;
  private readonly outputListeners = new Listeners<Parameters<OutputListener>>();

  constructor(
    readonly spec: string,
    readonly command: string,
    /** What answers the model calls (`--model`). */
    readonly source: Agent,
    /** The model name to serve instead of the source's (a replay serves the recorded one). */
    private readonly servedModel?: string,
  ) {}

  /** The model name the endpoint serves (`STEPBOX_MODEL`). */
  get modelName(): string {
    if (this.servedModel) return this.servedModel;
    const named = this.source.describe().model;
    return typeof named === 'string' && named !== '' ? named : `stepbox-${this.source.kind}`;
  }

  /** The URLs and token of the running servers (tests and the bench call them directly). */
  endpoints(): { modelUrl: string; mcpUrl: string; token: string } | null {
    return this.urls ? { ...this.urls, token: this.token } : null;
  }
  private urls: { modelUrl: string; mcpUrl: string } | null = null;

  async decide(input: DecideInput): Promise<Decision> {
    const ctx = input.context;
    if (!ctx) throw new AgentFailure('bad_agent_spec', 'exec: agents run only inside an episode');
    if (!this.proc) await this.launch(input, ctx);
    const k = input.step;
    this.offer(k - 1, toolAnswersAt(ctx.history, k - 1), false);
    const call = await this.nextCall(ctx, input.signal);
    this.pool = null;
    const injected = injectionsAfter(ctx.history, k - 1);
    const agentMessages = call.body.messages as ChatMessage[];
    const body = { ...call.body, messages: [...agentMessages, ...injected] };
    const tools = Array.isArray(call.body.tools) ? (call.body.tools as OpenAiTool[]) : [];
    let decision: Decision;
    try {
      decision = await this.source.decide({ step: k, messages: body.messages, tools, signal: input.signal });
    } catch (e) {
      call.fail(502, 'model_source_failed', `stepbox: the model source failed: ${(e as Error).message}`);
      throw e;
    }
    // The answer goes to the agent when the harness delivers it: after a stop before the
    // answer or the tools, with a person's edit applied, so what it gets is what is recorded.
    this.undelivered = call;
    const deliver = async (message: { content: string | null; tool_calls?: unknown }) => {
      if (this.undelivered !== call) return;
      this.undelivered = null;
      const answer = toAnswer(message, k);
      call.answer(answer, decision.usage);
      if (!answer.tool_calls) await this.awaitExitAfterFinal(ctx);
    };
    return {
      ...decision,
      deliver,
      request: body,
      requestMeta: {
        api: call.api,
        ...(call.api !== 'chat.completions' ? { received: call.raw } : {}),
        injected: injected.length,
        ...(decision.request !== undefined ? { forwarded: decision.request } : {}),
      },
    };
  }

  /** The agent's stdout and stderr as they are written (the window streams them); returns an unsubscribe. */
  onOutput(listener: OutputListener): () => void {
    return this.outputListeners.add(listener);
  }

  /** What the process wrote since the last call (the harness records it per step), or null when nothing. */
  takeOutput(): AgentOutput | null {
    const out = this.proc?.takeOutput();
    return out && (out.bytes.stdout > 0 || out.bytes.stderr > 0) ? out : null;
  }

  /** Tool calls of the agent waiting for their step's results (it is blocked on them). */
  pendingToolCalls(): number {
    return this.held.length;
  }

  /** Decisions made so far: the model source's (its cursor), for rollbacks and forks. */
  consumed(): number {
    return (this.source as { consumed?: () => number }).consumed?.() ?? 0;
  }

  describe(): Record<string, unknown> {
    return {
      command: this.command,
      model_source: this.source.spec,
      model: this.modelName,
      skip: this.consumed(),
    };
  }

  /**
   * Replay of the agent itself (`replay --verify --agent exec:CMD`): a new process is
   * fast-forwarded through all `steps` recorded steps, nothing executed, and must ask
   * exactly what was recorded. Returns where it diverged, or null.
   */
  async verifyAgainst(
    ctx: DecideContext,
    tools: readonly OpenAiTool[],
    steps: number,
  ): Promise<AgentDivergence | null> {
    try {
      await this.launch({ step: steps + 1, messages: [], tools }, ctx);
      // The last step's tool results go back too; a final answer lets the agent exit.
      this.offer(steps, toolAnswersAt(ctx.history, steps), true);
      const stop = new AbortController();
      await Promise.race([
        (this.proc as AgentProcess).exited,
        (this.endpoint as ModelEndpoint).next(stop.signal).catch(() => undefined),
        delay(FINAL_EXIT_GRACE_MS),
      ]);
      stop.abort();
      return this.divergence ? (this.divergence.details as unknown as AgentDivergence) : null;
    } catch (e) {
      if (e instanceof AgentFailure && e.endReason === 'diverged')
        return e.details as unknown as AgentDivergence;
      throw e;
    } finally {
      await this.dispose('replayed');
    }
  }

  /** Answers the pending model call with `episode_ended`, gives the process a moment, then stops its group. */
  async dispose(reason: string): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.endpoint?.end(reason);
    this.stashed?.fail(409, 'episode_ended', `stepbox: the episode has ended (${reason}); exit now`);
    this.stashed = null;
    this.undelivered?.fail(409, 'episode_ended', `stepbox: the episode has ended (${reason}); exit now`);
    this.undelivered = null;
    for (const h of this.held.splice(0))
      h.resolve(toolFailure('cancelled', `the episode has ended (${reason})`));
    if (this.proc) {
      await Promise.race([this.proc.exited, delay(END_GRACE_MS)]);
      await this.proc.stop();
    }
    await this.endpoint?.close();
    await this.mcp?.close();
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }

  /** Starts both servers and the process, then fast-forwards it through the steps already recorded. */
  private async launch(input: DecideInput, ctx: DecideContext): Promise<void> {
    this.tools = input.tools;
    this.endpoint = new ModelEndpoint(this.token, this.modelName);
    this.mcp = new McpHttpServer(
      this.token,
      () => this.tools,
      (name, args) => this.onToolCall(name, args),
    );
    const modelUrl = await this.endpoint.start();
    const mcpUrl = await this.mcp.start();
    this.urls = { modelUrl, mcpUrl };
    let taskFile = ctx.taskPath;
    if (!taskFile) {
      this.tempDir = mkdtempSync(join(tmpdir(), 'stepbox-task-'));
      taskFile = join(this.tempDir, 'task.json');
      writeFileSync(taskFile, JSON.stringify(ctx.task, null, 2));
    }
    const env = agentEnvironment({
      OPENAI_BASE_URL: modelUrl,
      OPENAI_API_KEY: this.token,
      ANTHROPIC_BASE_URL: this.endpoint.anthropicUrl,
      ANTHROPIC_API_KEY: this.token,
      STEPBOX_MCP_URL: mcpUrl,
      STEPBOX_TOKEN: this.token,
      STEPBOX_MODEL: this.modelName,
      STEPBOX_GOAL: ctx.task.goal,
      STEPBOX_TASK: taskFile,
      STEPBOX_EPISODE: ctx.episode,
    });
    this.proc = new AgentProcess(this.command, dirname(taskFile), env, (stream, text, truncated) =>
      this.outputListeners.emit(stream, text, truncated),
    );
    for (let i = 1; i < input.step; i++) await this.fastForward(i, ctx, input.signal);
  }

  /** Answers model call `step` and the tool calls before it from the recording; a difference diverges. */
  private async fastForward(step: number, ctx: DecideContext, signal?: AbortSignal): Promise<void> {
    this.offer(step - 1, toolAnswersAt(ctx.history, step - 1), true);
    const call = await this.nextCall(ctx, signal);
    this.pool = null;
    const rec = recordedStep(ctx.history, step);
    if (!rec.answer)
      throw diverged(step, 'model call', { field: '(answer)', recorded: null, actual: call.body });
    if (rec.request) {
      const diff = requestDifference(rec.request, call.body);
      if (diff) {
        call.fail(409, 'diverged', `stepbox: this request differs from the recording at ${diff.field}`);
        throw diverged(step, 'model request', diff);
      }
    }
    call.answer(toAnswer(rec.answer, step));
  }

  /** Makes `answers` (step `step`'s results) the pool the agent's tool calls are answered from. */
  private offer(step: number, answers: RecordedToolAnswer[], fastForward: boolean): void {
    this.pool = { step, answers: [...answers], fastForward };
    this.pump();
  }

  private onToolCall(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    if (this.disposed) return Promise.resolve(toolFailure('cancelled', 'the episode has ended'));
    return new Promise((resolve) => {
      this.held.push({ name, args, resolve });
      this.pump();
    });
  }

  /** Answers held tool calls from the pool, in order; a call the step did not make gets an error (or diverges). */
  private pump(): void {
    const pool = this.pool;
    if (!pool) return;
    for (const h of this.held.splice(0)) {
      const i = pool.answers.findIndex((a) => sameCall(a, h.name, h.args));
      if (i >= 0) {
        h.resolve(pool.answers[i].result);
        pool.answers.splice(i, 1);
        continue;
      }
      const what = `${h.name} ${JSON.stringify(h.args)}`;
      // A call of a tool the task does not have ran nowhere live either (the harness runs only
      // the task's tools): it gets the same error as live, so fast-forward and replay --verify
      // see what the recording saw instead of a divergence.
      const known = this.tools.some((t) => t.function.name === h.name);
      if (pool.fastForward && known) {
        const failure = diverged(pool.step, 'tool call', {
          field: 'tool_call',
          recorded: pool.answers.map((a) => ({ name: a.name, arguments: a.arguments })),
          actual: { name: h.name, arguments: h.args },
        });
        h.resolve(toolFailure('cancelled', `stepbox: ${failure.message}`));
        this.divergence = failure;
        this.wakeDivergence?.(failure);
        continue;
      }
      h.resolve(
        toolFailure(
          'invalid_arguments',
          `stepbox runs the tool calls of the model's answer; ${what} is not one of step ${pool.step}'s calls (or was answered already)`,
        ),
      );
    }
  }

  /** Waits for the agent's next model call; its exit, the deadline or a divergence end the wait. */
  private async nextCall(ctx: DecideContext, signal?: AbortSignal): Promise<ModelCall> {
    if (this.divergence) throw this.divergence;
    const stashed = this.stashed;
    this.stashed = null;
    const wake = stashed ? { kind: 'call' as const, call: stashed } : await this.wait(ctx, signal);
    switch (wake.kind) {
      case 'call':
        return wake.call;
      case 'diverged':
        throw wake.failure;
      case 'exit':
        throw exitOutcome(wake.exit);
      case 'deadline': {
        const stepMs = ctx.task.timeouts.step_hard * 1000;
        if (ctx.episodeLeftMs <= stepMs)
          throw new AgentEnded('episode_timeout', 'the episode timeout passed while the agent was working');
        throw new AgentFailure(
          'agent_timeout',
          `the agent made no model call within the hard step timeout (${ctx.task.timeouts.step_hard} s)`,
        );
      }
      default:
        return assertNever(wake, 'wake');
    }
  }

  private async wait(ctx: DecideContext, signal?: AbortSignal): Promise<Wake> {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const ms = Math.max(1, Math.min(ctx.episodeLeftMs, ctx.task.timeouts.step_hard * 1000));
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race<Wake>([
        (this.endpoint as ModelEndpoint).next(stop.signal).then((call) => ({ kind: 'call', call })),
        (this.proc as AgentProcess).exited.then((exit) => ({ kind: 'exit', exit })),
        new Promise<Wake>((resolve) => {
          timer = setTimeout(() => resolve({ kind: 'deadline' }), ms);
        }),
        new Promise<Wake>((resolve) => {
          this.wakeDivergence = (failure) => resolve({ kind: 'diverged', failure });
        }),
        new Promise<Wake>((_, reject) => {
          stop.signal.addEventListener('abort', () =>
            reject(
              new AgentFailure('stopped', 'the exec agent was stopped while waiting for its model call'),
            ),
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
      this.wakeDivergence = null;
      signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  /** After a final answer the agent should exit: a non-zero exit is an agent error, a new model call is kept. */
  private async awaitExitAfterFinal(ctx: DecideContext): Promise<void> {
    this.stashed = await exitAfterFinal(
      (this.proc as AgentProcess).exited,
      this.endpoint as ModelEndpoint,
      ctx.episodeLeftMs,
    );
  }
}

/** Where a re-run agent first asked something other than the recording. */
export interface AgentDivergence {
  readonly diverged_at: number;
  readonly field: string;
  readonly recorded: unknown;
  readonly actual: unknown;
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

/** Resolves after `ms` without keeping the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
