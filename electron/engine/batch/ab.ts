import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { atLeast } from '../../../shared/qa/flag.js';
import { parseTask, type Task } from '../../../shared/task.js';
import { checkBranch } from '../qa/check-branches.js';
import { loadStoredBranches } from '../qa/episode-set.js';
import { branchOutcome } from '../trace/branch-outcome.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import { runEpisodeToEnd } from './run-episode.js';
import type { EpisodeParts } from '../episode-parts.js';
import { TaskSandboxes, type SandboxSupply } from '../sandbox/sandbox-supply.js';
import { describeIssues } from '../../../shared/validation-issues.js';

/** An A/B side: an agent and sandbox/timeouts settings merged over each task. */
export const AbConfig = z.strictObject({
  agent: z.string().min(1).optional(),
  /** The `--model` source of an exec: agent. */
  model: z.string().min(1).optional(),
  /** The `--agent-dir` of a sandbox: agent (its files, read-only at /opt/agent). */
  agent_dir: z.string().min(1).optional(),
  sandbox: z.record(z.string(), z.unknown()).optional(),
  timeouts: z.record(z.string(), z.unknown()).optional(),
});
/** An A/B side's config. */
export type AbConfig = z.infer<typeof AbConfig>;

/** Reads a CONFIG file; throws a message naming the problem. */
export function readAbConfig(path: string): AbConfig {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
  const parsed = AbConfig.safeParse(doc);
  if (!parsed.success) throw new Error(`${path}: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep-merges `over` into `base` (objects merge, everything else replaces). */
export function deepMerge(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over))
    out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k] as Record<string, unknown>, v) : v;
  return out;
}

/** A task document with a side's `sandbox` and `timeouts` merged over it, parsed (defaults filled). */
export function taskUnder(doc: Record<string, unknown>, config: AbConfig, source: string): Task {
  const merged = deepMerge(doc, {
    ...(config.sandbox ? { sandbox: config.sandbox } : {}),
    ...(config.timeouts ? { timeouts: config.timeouts } : {}),
  });
  const parsed = parseTask(merged, source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

/** One side's numbers. */
export interface AbMetrics {
  readonly episodes: number;
  readonly success_rate: number;
  readonly mean_steps: number;
  readonly mean_duration_ms: number;
  readonly mean_quality: number;
  readonly mean_return: number;
  /** Rule id → flags at warning or worse. */
  readonly flags: Record<string, number>;
}

/** The comparison: each side, each metric's difference (B − A), and the rules whose flag counts differ. */
export interface AbReport {
  readonly a: AbMetrics;
  readonly b: AbMetrics;
  readonly difference: Record<
    'success_rate' | 'mean_steps' | 'mean_duration_ms' | 'mean_quality' | 'mean_return',
    number
  >;
  readonly flags_differ: { id: string; a: number; b: number }[];
  readonly episodes: { side: 'a' | 'b'; task: string; episode: string; status: string | null }[];
}

interface Sample {
  readonly success: boolean;
  readonly steps: number;
  readonly durationMs: number;
  readonly quality: number;
  readonly ret: number;
  readonly rules: string[];
}

function metrics(samples: readonly Sample[]): AbMetrics {
  const mean = (f: (s: Sample) => number) =>
    samples.length ? samples.reduce((a, s) => a + f(s), 0) / samples.length : 0;
  const flags: Record<string, number> = {};
  for (const s of samples) for (const r of s.rules) flags[r] = (flags[r] ?? 0) + 1;
  return {
    episodes: samples.length,
    success_rate: mean((s) => (s.success ? 1 : 0)),
    mean_steps: mean((s) => s.steps),
    mean_duration_ms: mean((s) => s.durationMs),
    mean_quality: mean((s) => s.quality),
    mean_return: mean((s) => s.ret),
    flags,
  };
}

/**
 * Runs every task under both configs, `episodes` times each, A and B interleaved so
 * drift in the machine's load hits both alike; then QA over every episode and the comparison.
 */
export async function runAb(options: {
  /** Each task's path and document, and what of its world stepbox leaves out (`World.warnings`). */
  readonly tasks: readonly { path: string; doc: Record<string, unknown>; warnings?: readonly string[] }[];
  readonly a: AbConfig;
  readonly b: AbConfig;
  /** The agent for a side whose config names none. */
  readonly defaultAgent?: string;
  /** The model source for a side whose config names none (exec: agents). */
  readonly defaultModel?: string;
  /** The agent folder for a side whose config names no agent (sandbox: agents). */
  readonly defaultAgentDir?: string;
  readonly episodes: number;
  readonly concurrency: number;
  readonly store: DiskEpisodeStore;
  readonly parts: EpisodeParts;
  /** The comparison's own supply (e.g. a `poolSupply`): closed when it ends. */
  readonly supply: SandboxSupply;
  readonly onEpisode?: (side: 'a' | 'b', task: string, episode: string, status: string | null) => void;
}): Promise<AbReport> {
  const sides = { a: options.a, b: options.b } as const;
  const jobs: {
    side: 'a' | 'b';
    task: Task;
    path: string;
    agent: string;
    model?: string;
    agentDir?: string;
    warnings?: readonly string[];
  }[] = [];
  for (let i = 0; i < options.episodes; i++)
    for (const t of options.tasks)
      for (const side of ['a', 'b'] as const) {
        const agent = sides[side].agent ?? options.defaultAgent;
        if (!agent) throw new Error(`config ${side.toUpperCase()} names no agent and no --agent was given`);
        const model = sides[side].model ?? (sides[side].agent ? undefined : options.defaultModel);
        // Like the model: a side that names its agent brings its own folder (or none).
        const agentDir = sides[side].agent_dir ?? (sides[side].agent ? undefined : options.defaultAgentDir);
        jobs.push({
          side,
          task: taskUnder(t.doc, sides[side], t.path),
          path: t.path,
          agent,
          model,
          ...(agentDir !== undefined ? { agentDir } : {}),
          ...(t.warnings?.length ? { warnings: t.warnings } : {}),
        });
      }
  const samples: Record<'a' | 'b', Sample[]> = { a: [], b: [] };
  const episodes: AbReport['episodes'][number][] = [];
  const sandboxes = new TaskSandboxes(options.supply);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      const out = await runEpisodeToEnd({
        task: job.task,
        taskPath: job.path,
        agentSpec: job.agent,
        model: job.model,
        ...(job.agentDir !== undefined ? { agentDir: job.agentDir } : {}),
        // As a single run and a batch record them: step 0 of every side's episode says them.
        ...(job.warnings ? { worldWarnings: job.warnings } : {}),
        store: options.store,
        parts: options.parts,
        sandboxes,
      });
      const [branch] = loadStoredBranches(out.branch, options.store);
      const check = await checkBranch(branch, options.store, { useIndex: false });
      // The steps and the return every view shows (the return worked out from the reward
      // events), not the end event's own fields.
      const outcome = branchOutcome(branch.trace.header, [
        ...branch.trace.events,
        ...(branch.trace.partial ?? []),
      ]);
      samples[job.side].push({
        success: out.end?.status === 'succeeded',
        steps: outcome.steps,
        durationMs: out.durationMs,
        quality: check.quality,
        ret: outcome.return ?? 0,
        rules: [...new Set(check.flags.filter((f) => atLeast(f.severity, 'warning')).map((f) => f.rule))],
      });
      episodes.push({
        side: job.side,
        task: job.task.name,
        episode: out.episode,
        status: out.end?.status ?? null,
      });
      options.onEpisode?.(job.side, job.task.name, out.episode, out.end?.status ?? null);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, jobs.length) }, worker));
  } finally {
    await sandboxes.close();
    await options.supply.close?.();
  }
  const a = metrics(samples.a);
  const b = metrics(samples.b);
  const ids = [...new Set([...Object.keys(a.flags), ...Object.keys(b.flags)])].sort();
  return {
    a,
    b,
    difference: {
      success_rate: b.success_rate - a.success_rate,
      mean_steps: b.mean_steps - a.mean_steps,
      mean_duration_ms: b.mean_duration_ms - a.mean_duration_ms,
      mean_quality: b.mean_quality - a.mean_quality,
      mean_return: b.mean_return - a.mean_return,
    },
    flags_differ: ids
      .filter((id) => (a.flags[id] ?? 0) !== (b.flags[id] ?? 0))
      .map((id) => ({ id, a: a.flags[id] ?? 0, b: b.flags[id] ?? 0 })),
    episodes,
  };
}
