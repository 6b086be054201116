import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { toolFailure, type ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { AgentFailure } from '../agents/agent.js';
import type { Agent, DecideContext, DecideInput, Decision, Reexecution } from '../agents/agent.js';
import { AgentProcess, agentEnvironment } from './agent-process.js';
import {
  recordedStep,
  requestDifference,
  sameCall,
  toolAnswersAt,
  type RecordedToolAnswer,
} from './fast-forward.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { McpHttpServer } from './mcp-server.js';
import type { ModelCall } from './model-endpoint.js';
import { ProgramAgent, diverged, divergenceOf, injectionsAfter, wakeFailure } from './program-agent.js';
import type { Wake } from './program-agent.js';
import { sandboxResources } from './workspace-resources.js';

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
export class ExecAgent extends ProgramAgent<AgentProcess> implements Agent {
  readonly kind = 'exec' as const;
  private mcp: McpHttpServer | null = null;
  private tools: readonly OpenAiTool[] = [];
  private pool: AnswerPool | null = null;
  private held: HeldCall[] = [];
  private divergence: AgentFailure | null = null;
  private wakeDivergence: ((f: AgentFailure) => void) | null = null;
  private tempDir: string | null = null;
  /** The episode's sandbox as of the last step: what the MCP server's resources read. */
  private sandbox: Sandbox | undefined;

  constructor(
    spec: string,
    readonly command: string,
    /** What answers the model calls (`--model`). */
    source: Agent,
    /** The model name to serve instead of the source's (a replay serves the recorded one). */
    servedModel?: string,
  ) {
    super(spec, source, servedModel);
  }

  /** The URLs and token of the running servers (tests and the bench call them directly). */
  endpoints(): { modelUrl: string; mcpUrl: string; token: string } | null {
    return this.urls ? { ...this.urls, token: this.token } : null;
  }
  private urls: { modelUrl: string; mcpUrl: string } | null = null;

  async decide(input: DecideInput): Promise<Decision> {
    const ctx = input.context;
    if (!ctx) throw new AgentFailure('bad_agent_spec', 'exec: agents run only inside an episode');
    this.sandbox = ctx.sandbox;
    if (!this.proc) await this.launch(input, ctx);
    const k = input.step;
    // Step k-1 ended: clients subscribed to a file it changed hear of it.
    this.mcp?.resourcesChanged(changedAt(ctx.history, k - 1));
    this.offer(k - 1, toolAnswersAt(ctx.history, k - 1), false);
    const call = await this.nextCall(ctx, input.signal);
    this.pool = null;
    const injected = injectionsAfter(ctx.history, k - 1);
    const agentMessages = call.messages;
    return this.decideFor(call, input, ctx, [...agentMessages, ...injected], injected.length);
  }

  /** Tool calls of the agent waiting for their step's results (it is blocked on them). */
  pendingToolCalls(): number {
    return this.held.length;
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
   * Replay of the agent itself (`replay --verify`): a new process is fast-forwarded through
   * all `steps` recorded steps, nothing executed, and must ask exactly what was recorded.
   * Nothing drifts (nothing runs); it says where it diverged, or null.
   */
  async reexecute(ctx: DecideContext, steps: number, tools: readonly OpenAiTool[]): Promise<Reexecution> {
    return this.reexecution(async () => {
      await this.launch({ step: steps + 1, messages: [], tools }, ctx);
      // The last step's tool results go back too; a final answer lets the agent exit.
      this.offer(steps, toolAnswersAt(ctx.history, steps), true);
      await this.callOrExit();
      return { drift: [], divergence: divergenceOf(this.divergence) };
    }, []);
  }

  protected override beforeStop(reason: string): void {
    for (const h of this.held.splice(0))
      h.resolve(toolFailure('cancelled', `the episode has ended (${reason})`));
  }

  protected override async afterStop(): Promise<void> {
    await this.mcp?.close();
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }

  /** Starts both servers and the process, then fast-forwards it through the steps already recorded. */
  private async launch(input: DecideInput, ctx: DecideContext): Promise<void> {
    this.tools = input.tools;
    this.endpoint = this.newEndpoint();
    this.mcp = new McpHttpServer(
      this.token,
      () => this.tools,
      (name, args) => this.onToolCall(name, args),
      undefined,
      sandboxResources(() => this.sandbox),
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
    this.answerAt(call, rec.answer, step);
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
    if (wake.kind === 'call') return wake.call;
    throw wakeFailure(wake, ctx);
  }

  private wait(ctx: DecideContext, signal?: AbortSignal): Promise<Wake> {
    const divergence = new Promise<Wake>((resolve) => {
      this.wakeDivergence = (failure) => resolve({ kind: 'diverged', failure });
    });
    const ms = Math.min(ctx.episodeLeftMs, ctx.task.timeouts.step_hard * 1000);
    return this.waitForCall(ms, signal, [divergence]).finally(() => (this.wakeDivergence = null));
  }
}

/** The workspace paths step `step`'s snapshot recorded as changed (the last such snapshot of the branch). */
function changedAt(history: readonly TraceEvent[], step: number): string[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const e = history[i];
    if (e.type === 'snapshot' && e.step === step) return e.changed.map((c) => c.path);
  }
  return [];
}
