import { atLeast, type Flag, type QaRuleId } from '../../../shared/qa/flag.js';
import type { EpisodeStatus, TraceEvent } from '../../../shared/trace-events.js';
import { runEpisodeToEnd } from '../batch/run-episode.js';
import { startEpisode, type StartEpisodeOptions } from '../harness/episode-factory.js';
import type { EpisodeRunner } from '../harness/episode-runner.js';
import { TaskSandboxes, type SandboxSupply } from '../sandbox/sandbox-supply.js';
import { checkBranch, recordFlags } from '../qa/check-branches.js';
import type { EpisodeIndex } from '../trace/episode-index.js';
import { loadStoredBranches } from '../qa/episode-set.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import type { EpisodeParts } from '../episode-parts.js';
import { CaseError, loadCase, type CaseSpec } from './case-library.js';
import { runsOwnProgram } from '../agents/agent-spec.js';
import { consentedTask } from '../harness/recorded-task.js';
import { refuseImported } from '../harness/load-world.js';
import type { WideningKind } from '../../../shared/isolation-policy.js';

/** One episode of a case run, judged. */
export interface CaseEpisode {
  readonly episode: string;
  readonly status: EpisodeStatus | null;
  readonly end_reason: string | null;
  readonly quality: number;
  readonly flags: readonly Flag[];
}

/** A case variant's run: its episodes and the rules they raised at warning or worse. */
export interface CaseRun {
  readonly case: string;
  readonly fixed: boolean;
  readonly episodes: readonly CaseEpisode[];
  /** Rule ids raised at severity ≥ warning over all episodes, sorted. */
  readonly raised: QaRuleId[];
  /** What the variant must raise: the case's expected rules, or none for the fix. */
  readonly expected: QaRuleId[];
  readonly ok: boolean;
}

/** Where a case runs, and who watches. */
export interface CaseEnv {
  readonly store: DiskEpisodeStore;
  /** The engine's index (`engine.index`), where each episode's QA flags are recorded. */
  readonly index: () => EpisodeIndex;
  readonly parts: EpisodeParts;
  readonly supply: SandboxSupply;
  readonly dir?: string;
  readonly onEpisode?: (index: number, episode: string) => void;
  readonly onEvent?: (event: TraceEvent) => void;
  /** Your own agent instead of the case's script (e.g. `exec:CMD`), to see whether it falls into the same failure. */
  readonly agentSpec?: string;
  /** What answers an exec: agent's model calls. */
  readonly model?: string;
  /** With `agentSpec` `sandbox:CMD`: its files, read-only at /opt/agent (`--agent-dir`). */
  readonly agentDir?: string;
  /** Consent to what a library case's task asks beyond the defaults (recorded-task policy). */
  readonly consent?: readonly WideningKind[];
}

/**
 * Runs a case variant: `expected.episodes` episodes of its task with its scripted agent,
 * one after another (sharing the sandbox when the task does not reset between episodes),
 * then QA over each without index medians (a fix is judged on its own, not against the
 * broken runs). The flags go to the index like `stepbox check`'s.
 */
export async function runCase(spec: CaseSpec, env: CaseEnv): Promise<CaseRun> {
  // An imported case's agent.json may name any program: stepbox never runs a command from
  // a bundle by itself (as for imported episodes, checkRecordedCommand).
  if (spec.imported && spec.agentSpec && runsOwnProgram(spec.agentSpec) && !env.agentSpec)
    throw new CaseError(
      'invalid_case',
      `case ${spec.name} was imported and its agent is ${spec.agentSpec}; stepbox never runs a command from a bundle by itself: give the agent again, e.g. --agent '${spec.agentSpec}'`,
    );
  const folder = spec.task.workspace.from;
  const refused = spec.imported && folder !== undefined ? refuseImported(spec.taskPath, folder) : null;
  if (refused && !refused.ok) throw new CaseError('invalid_case', refused.error.message);
  // A library case (saved from an episode, or imported from a bundle) is a recorded task:
  // it widens the sandbox only with consent; a case bundled with stepbox is ours.
  if (spec.origin === 'library')
    consentedTask(spec.task, `the task of case ${spec.name} (from the case library)`, env.consent);
  const sandboxes = new TaskSandboxes(env.supply);
  const episodes: CaseEpisode[] = [];
  try {
    for (let i = 0; i < spec.expected.episodes; i++) {
      const out = await runEpisodeToEnd({
        task: spec.task,
        taskPath: spec.taskPath,
        agentSpec: env.agentSpec ?? spec.agentSpec ?? `scripted:${spec.agentPath}`,
        model: env.agentSpec ? env.model : (env.model ?? spec.model),
        ...(env.agentSpec && env.agentDir !== undefined ? { agentDir: env.agentDir } : {}),
        store: env.store,
        parts: env.parts,
        sandboxes,
        onStart: (r) => env.onEpisode?.(i, r.episode),
        onEvent: env.onEvent,
      });
      const [branch] = loadStoredBranches(out.branch, env.store);
      const check = await checkBranch(branch, env.store, { useIndex: false });
      recordFlags(env.index(), [check]);
      episodes.push({
        episode: out.episode,
        status: out.end?.status ?? null,
        end_reason: out.end?.end_reason ?? null,
        quality: check.quality,
        flags: check.flags,
      });
    }
  } finally {
    await sandboxes.close();
  }
  const raised = [
    ...new Set(
      episodes.flatMap((e) => e.flags.filter((f) => atLeast(f.severity, 'warning')).map((f) => f.rule)),
    ),
  ].sort();
  const expected = spec.fixed ? [] : [...spec.expected.rules].sort();
  return {
    case: spec.name,
    fixed: spec.fixed,
    episodes,
    raised,
    expected,
    ok: raised.length === expected.length && raised.every((r, i) => r === expected[i]),
  };
}

/** Options of {@link startCaseEpisode}: an episode's, and how many run before it. */
export interface CaseEpisodeOptions extends StartEpisodeOptions {
  /** Episodes of the task run to their end first (a case's `expected.episodes` - 1). */
  readonly leadIn: number;
}

/**
 * Starts the last episode of a case run live (the window's way to run a case; the
 * runner stops after setup): the `leadIn` episodes before it first run to their end,
 * headless, with the same agent, as {@link runCase} runs them — when the task keeps its
 * sandbox between episodes, the live one starts in the sandbox they left, where a state
 * leak shows. With a reset between episodes they leave nothing behind, so none is run.
 */
export async function startCaseEpisode(options: CaseEpisodeOptions): Promise<EpisodeRunner> {
  const { leadIn, ...start } = options;
  if (leadIn <= 0 || start.task.sandbox.reset_between_episodes) return startEpisode(start);
  const kept = new TaskSandboxes(start.supply);
  try {
    for (let i = 0; i < leadIn; i++)
      await runEpisodeToEnd({
        task: start.task,
        taskPath: start.taskPath ?? null,
        agentSpec: start.agentSpec,
        ...(start.agentOptions?.model !== undefined ? { model: start.agentOptions.model } : {}),
        ...(start.agentOptions?.agentDir !== undefined ? { agentDir: start.agentOptions.agentDir } : {}),
        store: start.store,
        parts: start.parts,
        sandboxes: kept,
      });
    // The live episode takes the kept sandbox; when it ends, its sandbox goes back to the supply.
    const acquire = kept.supplyFor(start.task).acquire;
    return await startEpisode({ ...start, supply: { acquire, release: (s) => start.supply.release(s) } });
  } finally {
    await kept.close();
  }
}

/** Loads and runs a case by name. */
export function runCaseByName(name: string, fixed: boolean, env: CaseEnv): Promise<CaseRun> {
  return runCase(loadCase(name, { fixed, dir: env.dir }), env);
}
