import { z } from 'zod';
import { TraceEvent } from '../trace-events.js';
import { AgentProgress } from './agents.js';
import { BatchView, EpisodeStateInfo, StatsSample } from './models.js';

/** The debugger commands of the application menu. */
export const AppCommand = z.enum(['continue', 'step', 'stop', 'toggleBreakpoint', 'pause']);
/** A debugger command of the application menu. */
export type AppCommand = z.infer<typeof AppCommand>;

/**
 * Every event stream from the main process to the window: name → payload schema.
 * Subscriptions receive every payload of a stream; filter by `branch` or `terminal`.
 */
export const EVENTS = {
  /** A live trace event of a branch, as it is appended. */
  'episode.event': z.object({ episode: z.string(), branch: z.string(), event: TraceEvent }),
  /**
   * Output of an `exec:` agent's own process while step `step` runs, batched (~16 ms);
   * each stream stops at the step's cap, and `truncated` says the rest was dropped.
   */
  'episode.agentOutput': z.object({
    episode: z.string(),
    branch: z.string(),
    step: z.number().int().nonnegative(),
    stream: z.enum(['stdout', 'stderr']),
    data: z.string(),
    truncated: z.boolean(),
  }),
  /** A branch's state changed (running, paused at a breakpoint, ended). */
  'episode.state': EpisodeStateInfo,
  /**
   * A live branch was active (a step, a tool call, terminal input, a person's action): its idle
   * time starts again at `last_active` (epoch ms). Thinned to about once a second per branch.
   */
  'episode.activity': z.object({ episode: z.string(), branch: z.string(), last_active: z.number() }),
  /**
   * A live branch's sandbox was released for it: `idle` (nothing happened on it for
   * `ui.idle_release`) or `window_closed` (the last window closed). Its trace is closed as
   * interrupted and kept; it reopens live at `step` (`episode.reopen`).
   */
  'episode.released': z.object({
    episode: z.string(),
    branch: z.string(),
    step: z.number().int().nonnegative(),
    reason: z.enum(['idle', 'window_closed']),
    /** How long it had been idle (ms). */
    idle_ms: z.number().int().nonnegative(),
  }),
  /** Output of a terminal, batched (~16 ms or 64 KiB). */
  'terminal.data': z.object({ terminal: z.string(), data: z.string() }),
  /** A terminal ended. */
  'terminal.exit': z.object({
    terminal: z.string(),
    code: z.number().int().nullable(),
    message: z.string().optional(),
  }),
  /** A sample of a stats stream. */
  'sandbox.stats': StatsSample,
  /** A stats stream ended (container gone, Docker unreachable). */
  'sandbox.statsEnd': z.object({ subscription: z.string(), message: z.string() }),
  /**
   * Episodes or branches were added or changed: refresh the library. `on_disk`: the episodes
   * whose files were written on disk (a trace edited in place, appended by another process,
   * damaged): an open view of one of them reads its branch again.
   */
  'library.changed': z.object({ episode: z.string().nullable(), on_disk: z.array(z.string()).optional() }),
  /**
   * A debugger command chosen from the desktop app's menu (Electron only). The keys
   * themselves (F5, F10, Shift+F5, F9) still reach the page as keydown events.
   */
  'app.command': z.object({ command: AppCommand }),
  /** A batch's progress: a slot started or ended, or the batch finished (the whole view). */
  'batch.progress': BatchView,
  /**
   * A task's image being made for an episode the window starts. `kind: build`, from its
   * Dockerfile (`sandbox.build`, a devcontainer's): `start`, one `step` per line of the
   * build's output, then `built`; or `cached` alone when nothing needs building. `kind:
   * pull`, an image the engine lacks: `start`, a `step` per layer's change (its bytes, and
   * every layer's so far), then `pulled`. A failed build or pull fails the start.
   */
  'image.progress': z.object({
    /** The task path the start was asked for. */
    task: z.string(),
    image: z.string(),
    kind: z.enum(['build', 'pull']).default('build'),
    phase: z.enum(['cached', 'start', 'step', 'built', 'pulled']),
    line: z.string(),
    /** A build's Dockerfile, resolved (absent for a pull). */
    from: z.string().optional(),
  }),
  /** A step of an agent's install (`agents.install`); the last has phase `done` or the install failed. */
  'agents.progress': AgentProgress,
} as const;

/** The contract's event map. */
export type Events = typeof EVENTS;
/** An event stream name. */
export type EventName = keyof Events;
/** The payload of an event stream. */
export type EventOf<E extends EventName> = z.output<Events[E]>;

export { EVENT_NAMES, isEventName } from './event-names.js';
