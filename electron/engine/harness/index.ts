/**
 * The harness's public API: what the CLI, the contract services behind the UI and the
 * bench call. Every factory returns an {@link EpisodeRunner} (an EpisodeController plus
 * `history()`, `messages()`, `timings()`, `ended()`, `onBranch()`, `useAgent()` and
 * `recordHumanCommand()`), which the caller steps or runs and must `dispose()`.
 *
 * ```ts
 * const task = loadTask('resources/tasks/hello-python');          // Result<Task>
 * const c = await startEpisode({ task: task.value, taskPath, agentSpec: 'scripted:agent.jsonl',
 *                                store, supply, breakpoints: [{ kind: 'tool_error' }] });
 * await c.run();                       // to a breakpoint, a pause or the end
 * await c.rollbackTo(3); await c.run(); // continuing after a rollback forks a branch at 3
 * await c.dispose();                   // destroys (or releases) the sandbox
 * const f = await forkEpisode({ id: c.episode, at: 3, agentSpec: 'scripted:other.jsonl', store, supply });
 * const o = await openBranchController({ id, at: 5, store, supply }); // look around; stepping forks
 * const r = await resumeEpisode({ id, store, supply });                // interrupted → new branch
 * const report = await replayVerify({ id, store, supply });            // re-execution
 * ```
 * `store` and `supply` come from `openEngine` (engine/open-engine.ts); `supply` is any
 * SandboxSupply (cold starts, the warm pool, per-task reuse, the memory sandbox in tests).
 */
export { startEpisode, openBranchController } from './episode-factory.js';
export type { StartEpisodeOptions, OpenBranchOptions, EpisodeEnv } from './episode-factory.js';
export { forkEpisode, type ForkOptions } from './fork.js';
export { resumeEpisode } from './resume.js';
export { replayVerify, type ReplayOptions } from './replay-verify.js';
export {
  differenceLabel,
  type ReplayReport,
  type StepDifference,
  type StepVerdict,
} from './replay-report.js';
export { loadTask, taskFilePath } from './load-task.js';
export {
  loadWorld,
  READERS,
  type World,
  type WorldFlags,
  type WorldKind,
  type WorldReader,
} from './load-world.js';
export { EpisodeRunner, type StepTiming } from './episode-runner.js';
export { HarnessError } from './harness-error.js';
export { readLineage } from '../trace/lineage.js';
export type { EpisodeController, ControllerState, StopReason } from './episode-controller.js';
