import type { Task } from '../../../shared/task.js';
import type { EndEvent, TraceEvent } from '../../../shared/trace-events.js';
import type { AgentOptions } from '../agents/agent-spec.js';
import { startEpisode } from '../harness/episode-factory.js';
import type { EpisodeRunner } from '../harness/episode-runner.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import type { EpisodeParts } from '../episode-parts.js';
import type { TaskSandboxes } from '../sandbox/sandbox-supply.js';
import { logger } from '../log.js';

const log = logger('episode');

/** What one headless episode ended with. */
export interface EpisodeOutcome {
  readonly episode: string;
  readonly branch: string;
  readonly end: EndEvent | null;
  readonly durationMs: number;
}

/**
 * Runs one episode of `task` to its end with no breakpoints, headless: the loop the
 * batch runner, the case runner, A/B and the bench share. `onStart` hands out the live
 * runner (so a caller can stop it); the sandbox goes back through `sandboxes`.
 */
export async function runEpisodeToEnd(options: {
  readonly task: Task;
  readonly taskPath: string | null;
  /** What of its world stepbox leaves out (`World.warnings`): the header's `world_warnings`, as a single run records them. */
  readonly worldWarnings?: readonly string[];
  readonly agentSpec: string;
  /** What answers an exec: agent's model calls (`--model`). */
  readonly model?: string;
  /** A sandbox: agent's files, put read-only at /opt/agent (`--agent-dir`, absolute). */
  readonly agentDir?: string;
  readonly store: EpisodeStore;
  readonly parts: EpisodeParts;
  readonly sandboxes: TaskSandboxes;
  readonly onStart?: (runner: EpisodeRunner) => void;
  readonly onEvent?: (event: TraceEvent) => void;
  /** The episode's id, recorded by the caller before the episode exists (see `startEpisode`). */
  readonly episodeId?: string;
  /**
   * Stops the episode: before it is created nothing is (`startEpisode` throws `cancelled`);
   * after, it ends `interrupted` — also when the abort came while it was still starting.
   */
  readonly signal?: AbortSignal;
}): Promise<EpisodeOutcome> {
  const started = performance.now();
  const runner = await startEpisode({
    task: options.task,
    taskPath: options.taskPath,
    ...(options.worldWarnings?.length ? { worldWarnings: options.worldWarnings } : {}),
    agentSpec: options.agentSpec,
    ...(options.model !== undefined || options.agentDir !== undefined
      ? {
          agentOptions: {
            ...(options.model !== undefined ? { model: options.model } : {}),
            ...(options.agentDir !== undefined ? { agentDir: options.agentDir } : {}),
          } satisfies AgentOptions,
        }
      : {}),
    store: options.store,
    parts: options.parts,
    supply: options.sandboxes.supplyFor(options.task),
    ...(options.episodeId !== undefined ? { episodeId: options.episodeId } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  options.onStart?.(runner);
  const off = options.onEvent ? runner.onEvent(options.onEvent) : () => undefined;
  const stop = () =>
    void runner.stop().catch((e: Error) => log.warn(`stopping ${runner.episode}: ${e.message}`));
  // An abort that came while the episode was starting stops it now, before step 1.
  if (options.signal?.aborted) stop();
  else options.signal?.addEventListener('abort', stop, { once: true });
  try {
    while (!runner.ended()) {
      const reason = await runner.run();
      if (reason.kind === 'ended') break;
    }
    return {
      episode: runner.episode,
      branch: runner.branch,
      end: runner.ended(),
      durationMs: performance.now() - started,
    };
  } finally {
    options.signal?.removeEventListener('abort', stop);
    off();
    await runner.dispose();
  }
}
