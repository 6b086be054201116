import type { Breakpoint } from '../../shared/breakpoints.js';
import { cutLongTexts } from '../../shared/long-text.js';
import type { AgentOptions, EpisodeStateInfo, StopReason } from '../../shared/contract/index.js';
import type { StopPoints } from '../../shared/held-action.js';
import type { EpisodeStatus, TraceEvent } from '../../shared/trace-events.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { ControllerState, EpisodeController } from '../engine/harness/episode-controller.js';
import { logger } from '../engine/log.js';
import type { Agent } from '../engine/agents/agent.js';
import { manualAgentOf } from '../engine/agents/manual-agent.js';
import { batchAgentOutput } from './agent-output-batch.js';
import { engineAgentOptions } from './engine-agent-options.js';
import type { EventBus } from './event-bus.js';
import type { HarnessPort, RecordedRunOptions, TracePort } from './ports.js';
import { ServiceError } from './service-error.js';
import { systemClock, type Clock } from './clock.js';
import type { IdleLive, LiveActivity } from './idle-release.js';

/** End reason of a live branch stopped because a fork from it went on (retireSuperseded). */
export const SUPERSEDED_BY_FORK = 'superseded_by_fork';
/** End reason of a live branch released after `ui.idle_release` without activity (IdleReleaser). */
export const IDLE_RELEASED = 'idle_released';
/** End reason of a live branch released once the last window closed (WindowPresence). */
export const WINDOW_CLOSED = 'window_closed';

/** A person typing in a terminal says so at most this often (ms): the window's idle clock needs no more. */
const ACTIVITY_EVENT_EVERY_MS = 1_000;

const log = logger('episodes');

interface LiveEpisode {
  readonly controller: EpisodeController;
  readonly off: (() => void)[];
  /** The background `run()` in flight, if any. */
  running: Promise<StopReason> | null;
  lastReason: StopReason | null;
  /** The release in flight or done: an end and a stop both release, and both wait for it. */
  released: Promise<void> | null;
  /**
   * The live branch this fork was made from. Once the fork goes on (a step of its own done)
   * the parent is superseded: it stops unless it runs or someone views it (see {@link EpisodeManager.retireSuperseded}).
   */
  supersedes: string | null;
  /** Epoch ms of the last step, tool call, terminal input or a person's action on it (idle release). */
  lastActive: number;
  /** When `episode.activity` last said so (the event is thinned, the time is not). */
  lastSaid: number;
  /** Operations on it in flight (a step, a rollback, a fork): it is busy, never released idle. */
  ops: number;
}

/**
 * Holds the live {@link EpisodeController}s of this process (one per open branch) and
 * forwards their events and state changes to the bus. Every method resolves the id to a
 * live branch first and fails with `not_found` (saying to reopen it) when none is live. An
 * episode that ends is released at once: its sandbox is kept only while it can still run.
 */
export class EpisodeManager implements IdleLive {
  private readonly live = new Map<string, LiveEpisode>();
  /** Releases still in flight (an ended episode left `live` before its sandbox was back). */
  private readonly releasing = new Set<Promise<void>>();
  /** True while a person views a live branch (a terminal into it): a superseded branch viewed is kept. */
  private viewed: (branch: string) => boolean = () => false;
  /** Superseded branches being stopped (tests and dispose wait for them). */
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private readonly harness: HarnessPort,
    private readonly traces: TracePort,
    private readonly bus: EventBus,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Tells the manager which live branches a person views (their sandboxes are never stopped unseen). */
  setViewed(viewed: (branch: string) => boolean): void {
    this.viewed = viewed;
  }

  /** Resolves once every superseded branch being stopped is stopped. */
  async settled(): Promise<void> {
    await Promise.all([...this.retiring]);
  }

  /** Takes a new controller into the manager and starts forwarding its events. */
  adopt(controller: EpisodeController, supersedes: string | null = null): EpisodeStateInfo {
    const entry: LiveEpisode = {
      controller,
      off: [],
      running: null,
      lastReason: null,
      released: null,
      supersedes,
      lastActive: this.clock.now(),
      lastSaid: 0,
      ops: 0,
    };
    this.live.set(controller.branch, entry);
    const { episode } = controller;
    let branch = controller.branch;
    // A fork goes on once it completes a step of its own, or its agent finishes: only then is
    // the branch it was made from superseded. A fork whose first step failed (its agent would
    // not start, its endpoint was down) did not go on: its parent stays live, not "continued".
    const forkedAt = supersedes === null ? null : controller.currentStep();
    const wentOn = (event: TraceEvent): boolean =>
      forkedAt !== null &&
      ((event.type === 'snapshot' && event.step > forkedAt) ||
        (event.type === 'end' && (event.status === 'succeeded' || event.status === 'failed')));
    // Continuing after a rollback moves a runner onto a new branch: follow it.
    const onBranch = (controller as { onBranch?: (cb: (b: string) => void) => () => void }).onBranch;
    if (onBranch) {
      entry.off.push(
        onBranch.call(controller, (next: string) => {
          const from = branch;
          this.live.delete(branch);
          branch = next;
          this.live.set(next, entry);
          this.bus.emit('library.changed', { episode });
          // A window showing the closed branch follows the episode onto the new one.
          this.bus.emit('episode.state', { ...this.info(entry), continued_from: from });
        }),
      );
    }
    entry.off.push(
      controller.onEvent((event) => {
        // A step, a tool call, a person's command in the terminal: all are trace events.
        this.touch(entry);
        if (entry.supersedes !== null && wentOn(event)) this.retireSuperseded(entry);
        // Bounded like a step's detail (shared/long-text.ts): a 10 MB output is the trace's, not the window's.
        this.bus.emit('episode.event', {
          episode,
          branch: controller.branch,
          event: cutLongTexts(event).value,
        });
      }),
      batchAgentOutput(
        (listener) => controller.onAgentOutput?.(listener) ?? (() => undefined),
        (chunk) => this.bus.emit('episode.agentOutput', { episode, branch: controller.branch, ...chunk }),
      ),
      controller.onState((state, reason) => {
        this.touch(entry);
        if (reason) entry.lastReason = reason;
        this.bus.emit('episode.state', this.info(entry, state));
        // Stopped or ended, the branch's steps and status changed: the library shows them
        // (not on every step of a run, which would re-read a long trace per step).
        if (state === 'paused' || state === 'ended') this.bus.emit('library.changed', { episode });
        // An ended episode cannot run again without a reopen (a new sandbox from its
        // snapshot): its sandbox goes back now instead of being held until the app quits.
        if (state === 'ended') void Promise.resolve().then(() => this.release(entry, false));
      }),
    );
    this.bus.emit('library.changed', { episode });
    return this.info(entry);
  }

  /** Starts an episode from a task file. */
  async start(
    taskPath: string,
    agent: string,
    breakpoints: readonly Breakpoint[],
    run: boolean,
    agentOptions: AgentOptions = {},
    leadIn = 0,
    stopPoints: Partial<StopPoints> = {},
    /** A bare project folder's goal (loadWorld's flags). */
    world?: { readonly goal: string; readonly verify?: string },
  ) {
    const controller = await this.harness.start({
      taskPath,
      ...(world ? { world } : {}),
      agent,
      breakpoints,
      agentOptions,
      ...(leadIn > 0 ? { leadIn } : {}),
      onImageProgress: (p) => this.bus.emit('image.progress', { task: taskPath, ...p }),
    });
    // Before the first step: set after the start answered, a run had already passed them.
    if (Object.values(stopPoints).some((on) => on)) controller.setStopPoints(stopPoints);
    const info = this.adopt(controller);
    if (run) this.runInBackground(this.entry(controller.branch));
    return run ? this.info(this.entry(controller.branch)) : info;
  }

  /** The live controller of an id, or null when the branch is not live here. */
  find(id: string): EpisodeController | null {
    const direct = this.live.get(id);
    if (direct) return direct.controller;
    let branch: string;
    try {
      branch = this.traces.resolve(id).branch;
    } catch {
      // Unknown to the store too: not live (the caller reports not_found).
      return null;
    }
    return this.live.get(branch)?.controller ?? null;
  }

  /** Every live branch id. */
  branches(): string[] {
    return [...this.live.keys()];
  }

  /** The episodes with a branch live here. */
  liveEpisodes(): Set<string> {
    return new Set([...this.live.values()].map((entry) => entry.controller.episode));
  }

  /** The state of a live branch, or null. */
  stateOf(id: string): EpisodeStateInfo | null {
    const controller = this.find(id);
    return controller ? this.info(this.entry(controller.branch)) : null;
  }

  /**
   * The live controller of an id; throws `not_found` when it is not live. Every caller is a
   * person acting on the branch (a step, an injection, a terminal): that is activity.
   */
  require(id: string): EpisodeController {
    const controller = this.find(id);
    if (!controller)
      throw new ServiceError(
        'not_found',
        `${id} is not running here (it is recorded): reopen it at a step to continue it`,
      );
    this.noteActivity(controller);
    return controller;
  }

  /** The controller's branch was used (a key typed into its terminal): its idle time starts again. */
  noteActivity(controller: EpisodeController): void {
    for (const entry of new Set(this.live.values())) if (entry.controller === controller) this.touch(entry);
  }

  /** Every live branch with its last activity and whether it is busy (the idle releaser reads this). */
  activity(): LiveActivity[] {
    return [...new Set(this.live.values())].map((entry) => ({
      branch: entry.controller.branch,
      lastActive: entry.lastActive,
      busy: this.busy(entry),
    }));
  }

  /** Epoch ms of a live branch's last activity, or null when it is not live. */
  lastActive(id: string): number | null {
    const controller = this.find(id);
    return controller ? (this.live.get(controller.branch)?.lastActive ?? null) : null;
  }

  /**
   * Releases a branch idle for `idleMs` (issue 33.8): stopped as `idle_released` (its trace
   * closed and kept, its sandbox destroyed), and `episode.released` says at which step, so the
   * window offers to reopen it there. False when it became busy or went meanwhile.
   */
  async releaseIdle(branch: string, idleMs: number): Promise<boolean> {
    const entry = this.live.get(branch);
    if (!entry || this.busy(entry) || entry.controller.state() === 'ended') return false;
    await this.releaseFor(entry, 'idle', idleMs);
    return true;
  }

  /** Releases every live branch (the last window closed): each stopped as `window_closed`, its trace kept. */
  async releaseAll(): Promise<void> {
    await Promise.all(
      [...new Set(this.live.values())].map((entry) =>
        this.releaseFor(entry, 'window_closed', this.clock.now() - entry.lastActive).catch((e: unknown) =>
          log.warn(`releasing ${entry.controller.branch}: ${e instanceof Error ? e.message : String(e)}`),
        ),
      ),
    );
  }

  async step(id: string): Promise<EpisodeStateInfo> {
    const entry = this.entry(this.require(id).branch);
    this.assertNotRunning(entry, 'step');
    entry.lastReason = await this.during(entry, () => entry.controller.step());
    return this.info(entry);
  }

  async run(id: string, wait: boolean): Promise<EpisodeStateInfo> {
    const entry = this.entry(this.require(id).branch);
    const running = entry.running ?? this.runInBackground(entry);
    if (wait) await running;
    return this.info(entry);
  }

  pause(id: string): EpisodeStateInfo {
    const entry = this.entry(this.require(id).branch);
    entry.controller.pause();
    return this.info(entry);
  }

  /**
   * Stops the episode (trace closed as interrupted, end_reason `stopped` or the one given);
   * resolves once its sandbox is given back.
   */
  async stop(id: string, endReason?: string) {
    // An episode that already ended was released with its end: a stop that crossed it (or
    // comes after) answers that end instead of failing.
    if (!this.find(id)) {
      const recorded = this.recordedEnd(id);
      if (recorded) return recorded;
    }
    const entry = this.entry(this.require(id).branch);
    const end = await entry.controller.stop(endReason);
    // The end already started the release: wait for that one, so the sandbox is back (reset
    // into the pool or destroyed) when the stop answers.
    await this.release(entry, false);
    return { status: end.status, end_reason: end.end_reason };
  }

  /** Queues the next decision of a branch driven by a `manual` agent. */
  decide(
    id: string,
    content: string | null,
    call?: { name: string; arguments: Record<string, unknown> },
  ): void {
    const controller = this.require(id) as EpisodeController & { currentAgent?: () => Agent };
    const current = controller.currentAgent?.();
    const agent = current ? manualAgentOf(current) : null;
    if (!agent)
      throw new ServiceError(
        'conflict',
        `${controller.branch} is not driven by a manual agent (start it with agent "manual")`,
      );
    if (!call && !content)
      throw new ServiceError('invalid_input', 'give a tool call, or content as the final answer');
    const toolCalls = call
      ? [
          {
            id: `manual_${Date.now()}`,
            type: 'function',
            function: { name: call.name, arguments: JSON.stringify(call.arguments) },
          },
        ]
      : undefined;
    agent.provide({ content: content ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) });
  }

  setBreakpoints(id: string, breakpoints: readonly Breakpoint[]): Breakpoint[] {
    const controller = this.require(id);
    controller.setBreakpoints(breakpoints);
    return [...controller.breakpoints()];
  }

  inject(id: string, role: 'system' | 'user', content: string): void {
    this.require(id).inject(role, content);
  }

  override(id: string, shown: ToolResult): void {
    this.require(id).overrideLastResult(shown);
  }

  /** Where the branch's stepper also stops inside a step (before the answer, before the tools). */
  setStopPoints(id: string, points: Partial<StopPoints>): EpisodeStateInfo {
    const entry = this.entry(this.require(id).branch);
    entry.controller.setStopPoints(points);
    return this.info(entry);
  }

  /** Changes the step held at a stop inside it: the answer, a call's arguments, or a call's result. */
  changeHeld(
    id: string,
    change:
      | { readonly kind: 'answer'; readonly message: unknown }
      | { readonly kind: 'arguments'; readonly callId: string; readonly args: unknown }
      | { readonly kind: 'result'; readonly callId: string; readonly result: ToolResult },
  ): EpisodeStateInfo {
    const entry = this.entry(this.require(id).branch);
    this.assertNotRunning(entry, 'change the step');
    const c = entry.controller;
    if (change.kind === 'answer') c.editAnswer(change.message);
    else if (change.kind === 'arguments') c.editArguments(change.callId, change.args);
    else c.replaceResult(change.callId, change.result);
    const info = this.info(entry);
    // The window shows the held action as changed; it reads it from the state.
    this.bus.emit('episode.state', info);
    return info;
  }

  async rollback(id: string, step: number): Promise<EpisodeStateInfo> {
    const entry = this.entry(this.require(id).branch);
    this.assertNotRunning(entry, 'roll back');
    if (step > entry.controller.currentStep())
      throw new ServiceError(
        'invalid_input',
        `cannot roll back to step ${step}: the branch is at step ${entry.controller.currentStep()}`,
      );
    // The window shows the branch that goes on at once, paused at the step, under its parent
    // (issue 33, item 3), as after a fork or a reopen: not a branch that only the next step makes.
    await this.during(entry, () => entry.controller.rollbackTo(step, { branchNow: true }));
    return this.info(entry);
  }

  /** Forks a live branch at k, or reopens a recorded one at k (both give a new live branch). */
  async fork(id: string, step: number, agent?: string, options?: RecordedRunOptions) {
    const controller = this.find(id);
    if (controller) {
      const entry = this.entry(controller.branch);
      this.assertNotRunning(entry, 'fork');
      // The live parent stays until the fork goes on: then it is superseded (retireSuperseded).
      // The fork's own settings (the Fork settings' model source…), as a recorded fork takes them.
      const agentOptions = options?.agentOptions ? engineAgentOptions(options.agentOptions) : undefined;
      return this.newBranch(
        await this.during(entry, () => controller.fork(step, agent, agentOptions)),
        controller.branch,
      );
    }
    return this.newBranch(await this.harness.fork(id, step, agent, options));
  }

  async reopen(id: string, step: number, agent?: string, options?: RecordedRunOptions) {
    return this.newBranch(await this.harness.reopen(id, step, agent, options));
  }

  /** Stops and disposes every live branch (app quit, server close): no sandbox is left behind. */
  async disposeAll(): Promise<void> {
    await this.settled();
    await Promise.all(
      [...this.live.values()].map(async (entry) => {
        const { controller } = entry;
        try {
          if (controller.state() !== 'ended') await controller.stop();
        } catch (e) {
          log.warn(`stopping ${controller.branch}: ${e instanceof Error ? e.message : String(e)}`);
        }
        await this.release(entry, true);
      }),
    );
    await Promise.all([...this.releasing]);
  }

  /** The end event of a recorded branch, or null when it has none (or is unknown). */
  private recordedEnd(id: string): { status: EpisodeStatus; end_reason: string } | null {
    try {
      const end = [...this.traces.read(this.traces.resolve(id)).events]
        .reverse()
        .find((e) => e.type === 'end');
      return end?.type === 'end' ? { status: end.status, end_reason: end.end_reason } : null;
    } catch {
      // Unknown or unreadable: require() reports it.
      return null;
    }
  }

  /**
   * A fork that goes on (a step of its own done, or its agent finished: see adopt) supersedes
   * the live branch it was made from: that branch's sandbox
   * stops (its trace closed as interrupted, kept in the store, reopenable at any step)
   * unless it is running or a person views it. In the background: the fork's step does not
   * wait for it. Only once per fork.
   */
  private retireSuperseded(entry: LiveEpisode): void {
    const parent = entry.supersedes;
    if (parent === null) return;
    entry.supersedes = null;
    const old = this.live.get(parent);
    if (!old || old.running || old.controller.state() === 'running' || old.controller.state() === 'ended')
      return;
    if (this.viewed(parent)) {
      log.info(`${parent} is superseded by ${entry.controller.branch} but viewed: kept live`);
      return;
    }
    const done = this.stop(parent, SUPERSEDED_BY_FORK).then(
      () => log.info(`${parent} superseded by ${entry.controller.branch}: stopped, its trace kept`),
      (e: unknown) =>
        log.warn(`stopping superseded ${parent}: ${e instanceof Error ? e.message : String(e)}`),
    );
    this.retiring.add(done);
    void done.finally(() => this.retiring.delete(done));
  }

  /** Stops a live branch for `reason` and says so (`episode.released`) with the step it stood at. */
  private async releaseFor(entry: LiveEpisode, reason: 'idle' | 'window_closed', idleMs: number) {
    const { controller } = entry;
    const branch = controller.branch;
    const step = controller.currentStep();
    await this.stop(branch, reason === 'idle' ? IDLE_RELEASED : WINDOW_CLOSED);
    log.info(
      `${branch} released (${reason}, idle ${Math.round(idleMs / 1000)} s) at step ${step}: its trace is kept`,
    );
    this.bus.emit('episode.released', {
      episode: controller.episode,
      branch,
      step,
      reason,
      idle_ms: Math.max(0, Math.round(idleMs)),
    });
  }

  /** Something happened on the branch: its idle time starts again (and the window hears, thinned). */
  private touch(entry: LiveEpisode): void {
    const now = this.clock.now();
    entry.lastActive = now;
    if (now - entry.lastSaid < ACTIVITY_EVENT_EVERY_MS) return;
    entry.lastSaid = now;
    const { controller } = entry;
    this.bus.emit('episode.activity', {
      episode: controller.episode,
      branch: controller.branch,
      last_active: now,
    });
  }

  /** Running a step, or an operation on it in flight. */
  private busy(entry: LiveEpisode): boolean {
    return entry.running !== null || entry.controller.state() === 'running' || entry.ops > 0;
  }

  /** Runs an operation on the branch, busy (never released idle) until it settles, active after. */
  private async during<T>(entry: LiveEpisode, work: () => Promise<T>): Promise<T> {
    entry.ops++;
    try {
      return await work();
    } finally {
      entry.ops--;
      this.touch(entry);
    }
  }

  private newBranch(controller: EpisodeController, supersedes: string | null = null) {
    const state = this.adopt(controller, supersedes);
    return { episode: controller.episode, branch: controller.branch, state };
  }

  private release(entry: LiveEpisode, quiet: boolean): Promise<void> {
    entry.released ??= (async () => {
      for (const [key, value] of this.live) if (value === entry) this.live.delete(key);
      for (const off of entry.off) off();
      try {
        await entry.controller.dispose();
      } catch (e) {
        log.warn(`disposing ${entry.controller.branch}: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (!quiet) this.bus.emit('library.changed', { episode: entry.controller.episode });
    })();
    const released = entry.released;
    this.releasing.add(released);
    void released.finally(() => this.releasing.delete(released));
    return released;
  }

  private runInBackground(entry: LiveEpisode): Promise<StopReason> {
    const running = entry.controller.run().then(
      (reason) => {
        entry.lastReason = reason;
        return reason;
      },
      (e: unknown) => {
        const message = e instanceof Error ? e.message : String(e);
        log.error(`run of ${entry.controller.branch} failed: ${message}`);
        const reason: StopReason = { kind: 'ended', message };
        entry.lastReason = reason;
        return reason;
      },
    );
    entry.running = running;
    void running.finally(() => {
      if (entry.running === running) entry.running = null;
      this.bus.emit('episode.state', this.info(entry));
    });
    return running;
  }

  private assertNotRunning(entry: LiveEpisode, what: string): void {
    if (entry.running || entry.controller.state() === 'running')
      throw new ServiceError('busy', `cannot ${what} while the episode runs; pause it first (episode.pause)`);
  }

  private entry(branch: string): LiveEpisode {
    const entry = this.live.get(branch);
    if (!entry) throw new ServiceError('not_found', `branch ${branch} is no longer live`);
    return entry;
  }

  private info(entry: LiveEpisode, state: ControllerState = entry.controller.state()): EpisodeStateInfo {
    const { controller } = entry;
    return {
      episode: controller.episode,
      branch: controller.branch,
      state,
      step: controller.currentStep(),
      reason: entry.lastReason,
      stop_points: controller.stopPoints(),
      held: controller.held(),
    };
  }
}
