import type { Task } from '../../../shared/task.js';
import type { EndEvent, TraceEvent } from '../../../shared/trace-events.js';
import type { AgentOptions } from '../agents/agent-spec.js';
import { startEpisode } from '../harness/episode-factory.js';
import type { EpisodeRunner } from '../harness/episode-runner.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import type { EpisodeParts } from '../episode-parts.js';
import type { TaskSandboxes } from '../sandbox/sandbox-supply.js';

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
  readonly agentSpec: string;
  /** What answers an exec: agent's model calls (`--model`). */
  readonly model?: string;
  readonly store: EpisodeStore;
  readonly parts: EpisodeParts;
  readonly sandboxes: TaskSandboxes;
  readonly onStart?: (runner: EpisodeRunner) => void;
  readonly onEvent?: (event: TraceEvent) => void;
}): Promise<EpisodeOutcome> {
  const started = performance.now();
  const runner = await startEpisode({
    task: options.task,
    taskPath: options.taskPath,
    agentSpec: options.agentSpec,
    ...(options.model !== undefined ? { agentOptions: { model: options.model } satisfies AgentOptions } : {}),
    store: options.store,
    parts: options.parts,
    supply: options.sandboxes.supplyFor(options.task),
  });
  options.onStart?.(runner);
  const off = options.onEvent ? runner.onEvent(options.onEvent) : () => undefined;
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
    off();
    await runner.dispose();
  }
}
