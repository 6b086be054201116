import { connect } from 'node:net';
import { SANDBOX_ENV } from '../../../shared/constants.js';
import { outputResult, toolFailure, type ToolResult } from '../../../shared/tool-result.js';
import type { ToolCall } from '../../../shared/trace-events.js';
import { AgentFailure } from '../agents/agent.js';
import type {
  Agent,
  AgentNeeds,
  DecideContext,
  DecideInput,
  Decision,
  DriftedStep,
  Reexecution,
} from '../agents/agent.js';
import { AGENT_DIR, AgentDirTooLarge, agentFiles, type AgentFiles } from '../sandbox/agent-files.js';
import { driverOf } from '../agents/agent-driver.js';
import { snapshotAt } from '../trace/lineage.js';
import { recordedStep } from './fast-forward.js';
import { InsideAgentProcess } from './inside-agent-process.js';
import {
  applyShownOutputs,
  compareToolOutputs,
  newToolOutputs,
  shownOutputs,
  type Normaliser,
} from './inside-outputs.js';
import type { ModelCall } from './model-endpoint.js';
import type { InsideLaunch } from '../agents/inside-launch.js';
import { ProgramAgent, diverged, injectionsAfter, wakeFailure } from './program-agent.js';
import type { Wake } from './program-agent.js';

/** What an auxiliary call gets when the model source is a script (it answers the main loop only). */
const AUXILIARY_ANSWER = 'stepbox';

export type { InsideLaunch } from '../agents/inside-launch.js';

/**
 * An agent program that runs its own tools, run inside the episode's sandbox
 * (`sandbox:CMD`, recipes such as `codex`): `sh -c CMD` as the sandbox user in
 * /workspace, its model calls carried by the bridge to the episode's model endpoint and
 * answered by the model source (`--model`). Step k is its k-th main model call; the tool
 * calls of answer k are the step's actions, which the agent runs itself; their outputs
 * are read from request k+1 (snapshot k is taken while it waits for the answer). Calls
 * off the main loop (no tools, another model) are answered and recorded as auxiliary.
 * A new process (a rollback, a fork) starts on snapshot 0 and re-runs: calls 1..K are
 * answered from the recording while the agent executes its tools again; a tool output
 * that differs is drift (recorded, the branch goes on), a request the recording cannot
 * answer ends it as `diverged`.
 */
export class SandboxAgent extends ProgramAgent<InsideAgentProcess> implements Agent {
  readonly kind = 'sandbox' as const;
  /** A program agent that also starts inside the sandbox (its files at /opt/agent). */
  override readonly needs: AgentNeeds = { inside: this, reexecution: this, process: this, position: this };
  /** Why the agent made no next call, seen while waiting for its tool outputs. */
  private ended: Wake | null = null;
  private mainModel: string | null = null;
  /** Step whose tool outputs the next main call carries and must be compared (after a re-run), or 0. */
  private compareAt = 0;
  private readonly normalise: Normaliser;
  /** The steps that drifted on this process's re-run (what `replay --verify` reports). */
  private readonly drifted: DriftedStep[] = [];

  constructor(
    spec: string,
    readonly launchSpec: InsideLaunch,
    /** What answers the model calls (`--model`). */
    source: Agent,
    servedModel?: string,
  ) {
    super(spec, source, servedModel);
    const patterns = launchSpec.volatile.map((p) => new RegExp(p, 'gm'));
    this.normalise = (text) => patterns.reduce((t, re) => t.replace(re, '<volatile>'), text);
  }

  /** The files the sandbox must hold at /opt/agent (its config carries them), or null. */
  insideFiles(): AgentFiles | null {
    if (!this.launchSpec.agentDir) return null;
    try {
      return agentFiles(this.launchSpec.agentDir);
    } catch (e) {
      if (e instanceof AgentDirTooLarge)
        throw new AgentFailure('bad_agent_spec', `${this.spec}: ${e.message}`);
      throw e;
    }
  }

  /** The endpoint's host URL and token (tests and the bench call it directly). */
  endpoints(): { modelUrl: string; token: string; port: number | null } | null {
    return this.modelUrl
      ? { modelUrl: this.modelUrl, token: this.token, port: this.proc?.port ?? null }
      : null;
  }
  private modelUrl: string | null = null;

  async decide(input: DecideInput): Promise<Decision> {
    const ctx = input.context;
    if (!ctx) throw new AgentFailure('bad_agent_spec', 'sandbox: agents run only inside an episode');
    if (!this.proc) await this.launch(input, ctx);
    const k = input.step;
    const call = await this.mainCall(k, ctx, input.signal);
    if (this.compareAt > 0) {
      await this.compare(this.compareAt, call, ctx);
      this.compareAt = 0;
    }
    const shown = shownOutputs(ctx.history);
    const agentMessages = call.messages;
    const overridden = applyShownOutputs(agentMessages, shown);
    const injected = injectionsAfter(ctx.history, k - 1);
    const messages = [...overridden.messages, ...injected];
    const tools = call.tools;
    const decision = await this.decideFor(call, input, ctx, messages, injected.length, {
      ...(overridden.replaced > 0 ? { overridden: overridden.replaced } : {}),
    });
    return {
      ...decision,
      tools,
      external: (calls, hardMs) => this.toolOutputs(calls, hardMs, ctx, input.signal),
    };
  }

  describe(): Record<string, unknown> {
    return {
      command: this.launchSpec.command,
      ...(this.launchSpec.recipe ? { recipe: this.launchSpec.recipe } : {}),
      ...(this.launchSpec.agentDir ? { agent_dir: this.launchSpec.agentDir } : {}),
      model_source: this.source.spec,
      model: this.modelName,
      skip: this.consumed(),
    };
  }

  /**
   * Replay of the agent itself (`replay --verify`): a new process, on snapshot 0 in
   * `ctx.sandbox`, re-runs all `steps` recorded steps answered from the recording. Says the
   * steps that drifted and where it diverged, or null.
   */
  async reexecute(ctx: DecideContext, steps: number): Promise<Reexecution> {
    return this.reexecution(async () => {
      await this.launch({ step: steps + 1, messages: [], tools: [] }, ctx);
      // The last answer went out; a final one lets the agent exit, a tool call's outputs come next.
      const next = await this.callOrExit();
      if (next) {
        this.stashed = next;
        await this.compare(steps, next, ctx);
      }
      return { drift: this.drifted, divergence: null };
    }, this.drifted);
  }

  /** Starts the endpoint and the agent inside the sandbox, then re-runs the steps already recorded. */
  private async launch(input: DecideInput, ctx: DecideContext): Promise<void> {
    const sandbox = ctx.sandbox;
    const startAgent = sandbox?.startAgent?.bind(sandbox);
    if (!sandbox || !startAgent)
      throw new AgentFailure(
        'bad_agent_spec',
        `${this.spec} runs inside the sandbox, which the ${sandbox?.backend ?? 'current'} backend cannot do; use the Docker backend`,
      );
    const files = this.insideFiles();
    if (files && sandbox.config.agentFiles?.hash !== files.hash)
      throw new AgentFailure(
        'bad_agent_spec',
        `${this.spec}: the sandbox was made without its files at ${AGENT_DIR} (${this.launchSpec.agentDir}); its episode must be started with the agent (startEpisode, openBranchController)`,
      );
    this.endpoint = this.newEndpoint();
    this.modelUrl = await this.endpoint.start();
    const hostPort = Number(new URL(this.modelUrl).port);
    const fill = (v: string) => v.replaceAll('@MODEL@', this.modelName);
    const launch = this.launchSpec;
    const env: Record<string, string> = {
      ...SANDBOX_ENV,
      PATH: `${AGENT_DIR}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      ...Object.fromEntries(Object.entries(launch.env).map(([k, v]) => [k, fill(v)])),
      OPENAI_BASE_URL: 'http://127.0.0.1:@PORT@/v1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:@PORT@',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:@PORT@',
      OPENAI_API_KEY: this.token,
      ANTHROPIC_API_KEY: this.token,
      GEMINI_API_KEY: this.token,
      STEPBOX_TOKEN: this.token,
      STEPBOX_MODEL: this.modelName,
      STEPBOX_GOAL: ctx.task.goal,
      STEPBOX_EPISODE: ctx.episode,
    };
    this.proc = await InsideAgentProcess.start(
      startAgent,
      {
        command: launch.command,
        env,
        homeFiles: Object.fromEntries(Object.entries(launch.homeFiles).map(([k, v]) => [k, fill(v)])),
        clearHome: true,
        agentFilesHash: sandbox.config.agentFiles?.hash ?? null,
        port: hostPort,
        connect: () => connect(hostPort, '127.0.0.1').setNoDelay(true),
      },
      (stream, text, truncated) => this.outputListeners.emit(stream, text, truncated),
    );
    // On a network shared with the host the endpoint's own port is taken inside: the bridge
    // listens on another, and the agent's requests name that one in their Host.
    if (this.proc.port !== hostPort) this.endpoint.answerAs(this.proc.port);
    for (let j = 1; j < input.step; j++) {
      const call = await this.mainCall(j, ctx, input.signal);
      if (j > 1) await this.compare(j - 1, call, ctx);
      const rec = recordedStep(ctx.history, j);
      if (!rec.answer) {
        call.fail(409, 'diverged', `stepbox: step ${j} has no recorded answer`);
        throw diverged(j, 'model call', { field: '(answer)', recorded: null, actual: call.body });
      }
      this.answerAt(call, rec.answer, j);
    }
    this.compareAt = input.step - 1;
  }

  /**
   * Compares the tool outputs request j+1 carries with those recorded at step j (drift,
   * recorded as a `warning` of code `drift` at step j, with the workspace's tree hash
   * against snapshot j); one the recording cannot answer diverges.
   */
  private async compare(j: number, call: ModelCall, ctx: DecideContext): Promise<void> {
    const messages = Array.isArray(call.body.messages) ? call.messages : [];
    const result = compareToolOutputs(ctx.history, j, newToolOutputs(messages), this.normalise);
    if (result.kind === 'diverged') {
      call.fail(409, 'diverged', `stepbox: this request differs from the recording at ${result.field}`);
      throw diverged(j + 1, 'model request', result);
    }
    let tree: { recorded: string; actual: string } | null = null;
    const snap = snapshotAt(ctx.history, j);
    if (ctx.sandbox && ctx.snapshots && snap) {
      const info = await ctx.sandbox.snapshot(ctx.snapshots);
      if (info.treeHash !== snap.tree_hash) tree = { recorded: snap.tree_hash, actual: info.treeHash };
    }
    if (result.drift.length === 0 && !tree) return;
    this.drifted.push({ step: j, calls: result.drift, workspace: tree });
    const what = [
      ...result.drift.map((d) => `${d.name} (${d.call_id}) printed something else`),
      ...(tree ? ['the workspace differs from snapshot ' + j] : []),
    ];
    this.notes.push({
      type: 'warning',
      step: j,
      source: 'harness',
      code: 'drift',
      message: `step ${j} drifted on re-execution: ${what.join('; ')}`,
      drift: result.drift,
      ...(tree ? { tree_hash: tree.actual, recorded_tree_hash: tree.recorded } : {}),
    });
  }

  /** Waits for the agent's next request and reads the outputs of `calls` from it. */
  private async toolOutputs(
    calls: readonly ToolCall[],
    hardMs: number,
    ctx: DecideContext,
    signal?: AbortSignal,
  ): Promise<ReadonlyMap<string, ToolResult>> {
    const out = new Map<string, ToolResult>();
    let wake: Wake;
    try {
      wake = await this.nextMain(ctx, signal, hardMs);
    } catch (e) {
      for (const c of calls)
        out.set(c.id, toolFailure('cancelled', e instanceof Error ? e.message : String(e)));
      return out;
    }
    if (wake.kind !== 'call') {
      this.ended = wake;
      const why =
        wake.kind === 'exit'
          ? 'the agent exited before it reported this call'
          : 'the agent did not report this call within the hard step timeout';
      for (const c of calls) out.set(c.id, toolFailure('cancelled', why));
      return out;
    }
    this.stashed = wake.call;
    const messages = Array.isArray(wake.call.body.messages) ? wake.call.messages : [];
    const outputs = newToolOutputs(messages);
    for (const c of calls) {
      const o = outputs.find((x) => x.call_id === c.id);
      out.set(
        c.id,
        o ? outputResult(o.content) : toolFailure('cancelled', 'the agent sent no output for this call'),
      );
    }
    return out;
  }

  /** The agent's next main-loop call (auxiliary calls on the way answered and noted); its exit or a timeout ends the wait. */
  private async mainCall(step: number, ctx: DecideContext, signal?: AbortSignal): Promise<ModelCall> {
    const ended = this.ended;
    if (ended) {
      this.ended = null;
      throw this.wakeFailure(ended, ctx);
    }
    const stashed = this.stashed;
    this.stashed = null;
    if (stashed) return stashed;
    const wake = await this.nextMain(ctx, signal, ctx.task.timeouts.step_hard * 1000, step);
    if (wake.kind === 'call') return wake.call;
    throw this.wakeFailure(wake, ctx);
  }

  private wakeFailure(wake: Wake, ctx: DecideContext): Error {
    return wake.kind === 'call'
      ? new AgentFailure('internal', 'unexpected model call')
      : wakeFailure(wake, ctx);
  }

  /** Waits for a main-loop call, its exit or `ms`; auxiliary calls are answered and noted at `step`. */
  private async nextMain(
    ctx: DecideContext,
    signal: AbortSignal | undefined,
    ms: number,
    step?: number,
  ): Promise<Wake> {
    const deadline = performance.now() + Math.max(1, Math.min(ctx.episodeLeftMs, ms));
    for (;;) {
      const wake = await this.waitForCall(deadline - performance.now(), signal);
      if (wake.kind !== 'call' || !this.auxiliary(wake.call)) return wake;
      await this.answerAuxiliary(wake.call, step ?? this.lastStep(ctx));
    }
  }

  private lastStep(ctx: DecideContext): number {
    let step = 0;
    for (const e of ctx.history) if (e.type === 'model_output') step = e.step;
    return step;
  }

  /** A call off the agent's main loop: no tools offered, or another model than the main loop's. */
  private auxiliary(call: ModelCall): boolean {
    const tools = call.body.tools;
    if (!Array.isArray(tools) || tools.length === 0) return true;
    const model = call.body.model ?? '';
    if (this.mainModel === null) this.mainModel = model;
    return model !== this.mainModel;
  }

  /** Answers an auxiliary call (a live model source answers it; a script's lines are the main loop's) and notes it. */
  private async answerAuxiliary(call: ModelCall, step: number): Promise<void> {
    let content = AUXILIARY_ANSWER;
    if (driverOf(this.source.kind).decides === 'model') {
      try {
        const d = await this.source.decide({
          step,
          messages: call.messages,
          tools: [],
        });
        content = d.message.content ?? '';
      } catch (e) {
        call.fail(
          502,
          'model_source_failed',
          `stepbox: the model source failed: ${e instanceof Error ? e.message : String(e)}`,
        );
        return;
      }
    }
    this.answerAt(call, { content }, step);
    this.notes.push({
      type: 'auxiliary_call',
      step,
      source: 'agent',
      api: call.api,
      model: call.body.model ?? null,
      request: call.body,
      answer: content,
    });
  }
}
