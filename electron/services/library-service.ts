import {
  TaskLimits,
  type BranchSummary,
  type CompareRow,
  type EpisodeEntry,
  type EpisodeStateInfo,
  type EpisodeView,
  type FileChange,
  type FlagSummary,
  type SearchHit,
  type StepDetail,
  type StepRow,
  type UnreadableEpisode,
} from '../../shared/contract/index.js';
import { z } from 'zod';
import { stepRewardParts } from '../../shared/rewards.js';
import { cutLongTexts } from '../../shared/long-text.js';
import { DEFAULT_TOOLS } from '../../shared/task.js';
import { taskCheckOf } from '../../shared/task-check.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { EndEvent, HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import { oneLine } from '../../shared/one-line.js';
import { BranchCache, type ViewedBranch } from './branch-cache.js';
import { snapshotAt } from '../engine/trace/lineage.js';
import type { EpisodeManager } from './episode-manager.js';
import type { TracePort } from './ports.js';
import { ServiceError } from './service-error.js';
import { fileChanges, manifestOf, setupChanges } from './workspace-files.js';
import { compareSteps } from '../engine/compare/compare-branches.js';
import { endDetail } from '../engine/trace/branch-outcome.js';
import { engineError } from '../engine/engine-error.js';

const DEFAULT_PAGE = 500;
/** Where `stepDetails` stops adding steps (JSON characters): a few screens of ordinary steps. */
const STEP_DETAILS_BYTES = 1_000_000;
/** Steps whose views `stepDetails` builds at once (the window's first call asks for six). */
const STEP_DETAILS_AT_ONCE = 8;

/** The recorded side of the contract: library, opened episodes, trace pages, inspector, compare. */
export class LibraryService {
  private readonly cache: BranchCache;

  constructor(
    private readonly traces: TracePort,
    private readonly episodes: EpisodeManager,
  ) {
    this.cache = new BranchCache(traces);
  }

  async list(
    query: string | undefined,
    limit: number,
  ): Promise<{ episodes: EpisodeEntry[]; total: number; unreadable: UnreadableEpisode[] }> {
    const live = new Set(this.episodes.branches());
    const needle = query?.trim().toLowerCase() ?? '';
    const byEpisode = new Map<string, EpisodeEntry>();
    for (const b of await this.traces.listBranches()) {
      const summary: BranchSummary = live.has(b.branch)
        ? { ...b, live: true, last_active: this.episodes.lastActive(b.branch) }
        : { ...b, live: false };
      const entry = byEpisode.get(b.episode) ?? {
        episode: b.episode,
        task: b.task,
        created: b.created,
        branches: [],
      };
      entry.branches.push(summary);
      byEpisode.set(b.episode, entry);
    }
    const matching = [...byEpisode.values()]
      .filter(
        (e) =>
          !needle ||
          `${e.episode} ${e.task} ${e.branches.map((b) => `${b.branch} ${b.agent} ${b.status ?? 'open'}`).join(' ')}`
            .toLowerCase()
            .includes(needle),
      )
      .sort((x, y) => y.created - x.created);
    for (const e of matching)
      e.branches.sort((x, y) =>
        x.parent_branch === null ? -1 : y.parent_branch === null ? 1 : x.created - y.created,
      );
    // After listBranches: its refresh indexed what can be read; the rest is named, not dropped.
    const unreadable = this.traces
      .unreadable()
      .filter((u) => !needle || `${u.episode} ${u.branch} ${u.message}`.toLowerCase().includes(needle));
    return { episodes: matching.slice(0, limit), total: matching.length, unreadable };
  }

  search(query: string, limit: number): Promise<SearchHit[]> {
    return this.traces.search(query, limit);
  }

  /**
   * An opened branch: summary, rows (inherited steps included), flags, branches and live state.
   * With `lastRows`, only the last rows: the window's first screen (the rest by `rows`).
   */
  async open(id: string, lastRows?: number): Promise<EpisodeView> {
    const bt = await this.cache.load(id);
    const total = bt.rows.length;
    const from = lastRows === undefined ? 0 : Math.max(0, total - lastRows);
    const flags = [...bt.flags];
    const state = this.episodes.stateOf(bt.info.branch);
    const controller = this.episodes.find(bt.info.branch);
    const end = bt.trace.end;
    return {
      summary: { ...bt.summary, live: state !== null },
      goal: typeof bt.header.task.goal === 'string' ? bt.header.task.goal : '',
      limits: taskLimitsOf(bt.header.task),
      task_path: bt.header.task_path,
      check: taskCheckOf(bt.header.task),
      // Recorded on the episode's first branch, when its world was read: a fork's says nothing.
      world_warnings: worldWarningsOf(bt.lineage.chain[bt.lineage.chain.length - 1].header),
      image: bt.header.image,
      state,
      breakpoints: controller ? [...controller.breakpoints()] : [],
      rows: bt.rows.slice(from),
      ...(lastRows === undefined ? {} : { rows_from: from, rows_total: total }),
      branches: await this.branchSummaries(bt.info.episode),
      flags,
      end: end ? endOf(end, bt.events) : null,
      tools: taskToolNames(bt.header.task),
    };
  }

  /** A page of a branch's timeline rows by index (what an open with `lastRows` left out). */
  async rows(
    id: string,
    from: number,
    limit: number,
  ): Promise<{ rows: StepRow[]; from: number; total: number }> {
    const { rows } = await this.cache.load(id);
    return { rows: rows.slice(from, from + limit), from, total: rows.length };
  }

  /** A branch's QA flags (with the engine's references), as the opened view shows them. */
  async flags(id: string): Promise<FlagSummary[]> {
    return [...(await this.cache.load(id)).flags];
  }

  /** A page of a branch's own events, by seq. */
  trace(id: string, fromSeq = 0, limit = DEFAULT_PAGE) {
    const info = this.traces.resolve(id);
    const events = this.traces.read(info).events;
    const start = events.findIndex((e) => e.seq >= fromSeq);
    const page = start < 0 ? [] : events.slice(start, start + limit);
    const after = start < 0 ? -1 : start + limit;
    return {
      events: page,
      next: after >= 0 && after < events.length ? events[after].seq : null,
      total: events.length,
    };
  }

  /** The inspector's view of step k: calls, results, model request, memory, changed files. */
  async stepDetail(id: string, step: number): Promise<StepDetail> {
    // Long texts (a 10 MB tool output an agent inside the sandbox wrote) go as head and tail:
    // whole, the window froze for seconds on them; the trace keeps them whole.
    const { value, cuts } = cutLongTexts(await this.wholeStepDetail(id, step));
    return cuts.length ? { ...value, cut: cuts } : value;
  }

  /** Step k's view with every text as recorded. */
  private async wholeStepDetail(id: string, step: number): Promise<StepDetail> {
    const bt = await this.cache.load(id);
    const events = (bt.byStep.get(step) ?? []).filter((e) => e.type !== 'end');
    if (events.length === 0) throw new ServiceError('not_found', `${bt.info.branch} has no step ${step}`);
    const flags = bt.flags.filter((f) => f.step === step);
    const results = new Map<string, ToolResult>();
    const reals = new Map<string, ToolResult>();
    const replaced = new Set<string>();
    const overrides = new Map<string, { real: ToolResult; shown: ToolResult }>();
    let final: string | null = null;
    let parseError: string | null = null;
    let request: unknown = null;
    let output: StepDetail['model_output'] = null;
    const calls: TraceEvent[] = [];
    for (const e of events) {
      if (e.type === 'tool_call') calls.push(e);
      else if (e.type === 'tool_result') {
        results.set(e.call_id, e.result);
        if (e.real) reals.set(e.call_id, e.real);
        if (e.replaced) replaced.add(e.call_id);
      } else if (e.type === 'override') overrides.set(e.call_id, { real: e.real, shown: e.shown });
      else if (e.type === 'action') final = e.final;
      else if (e.type === 'parse_error') parseError = e.message;
      else if (e.type === 'model_request') request = e.request;
      else if (e.type === 'model_output') output = { raw: e.raw, usage: e.usage ?? null };
    }
    const snapshot = [...events].reverse().find((e) => e.type === 'snapshot');
    return {
      step,
      calls: calls.flatMap((c) =>
        c.type === 'tool_call'
          ? [
              {
                call: { id: c.call_id, name: c.name, arguments: c.arguments },
                result: results.get(c.call_id) ?? null,
                override: overrides.get(c.call_id) ?? null,
                real: reals.get(c.call_id) ?? null,
                ...(replaced.has(c.call_id) ? { replaced: true } : {}),
              },
            ]
          : [],
      ),
      final,
      parse_error: parseError,
      model_request: request,
      model_output: output,
      memory: events.flatMap((e) =>
        e.type === 'memory_write'
          ? [{ key: e.key, before: e.before, after: e.after, writer: e.writer, corruption: e.corruption }]
          : [],
      ),
      files: await this.changedFiles(bt, step),
      injected: events.flatMap((e) => (e.type === 'injected' ? [{ role: e.role, content: e.content }] : [])),
      human: events.flatMap((e) =>
        e.type === 'human_command'
          ? [
              {
                command: e.command,
                exit_code: e.exit_code ?? null,
                ...(e.files ? { files: e.files } : {}),
                ...(e.others ? { others: e.others } : {}),
              },
            ]
          : [],
      ),
      edits: events.flatMap((e) =>
        e.type === 'edit'
          ? [{ stage: e.stage, call_id: e.call_id ?? null, original: e.original, edited: e.edited }]
          : [],
      ),
      // Summed over the step's reward events, as the row and the diff sum them (issue 34.5).
      rewards: stepRewardParts(events),
      flags,
      tree_hash: snapshot?.type === 'snapshot' ? snapshot.tree_hash : null,
      events,
    };
  }

  /**
   * The inspector's views of `steps`, in that order, for the window to hold before they are
   * viewed: a step without one (not recorded yet) is left out, and the list stops once it
   * passes STEP_DETAILS_BYTES (a model request can carry a whole conversation: the neighbours
   * of a step are not worth megabytes).
   */
  async stepDetails(id: string, steps: readonly number[]): Promise<StepDetail[]> {
    // A branch that cannot be read fails the call (as stepDetail does); a step it lacks does not.
    const bt = await this.cache.load(id);
    const wanted = steps.filter((s) => bt.byStep.has(s));
    const out: StepDetail[] = [];
    let bytes = 0;
    // A few at once: each step reads its snapshots' manifests, and read one after another
    // they waited a turn of the event loop each behind the episodes running in this process
    // (a click beside a row reached by a slider move waits for this call, issue 33.9); a few,
    // not all, so the byte limit still stops the work early.
    for (let i = 0; i < wanted.length; i += STEP_DETAILS_AT_ONCE) {
      const batch = await Promise.all(
        wanted.slice(i, i + STEP_DETAILS_AT_ONCE).map((step) =>
          this.stepDetail(id, step).catch((e: unknown) => {
            // A step holding only its end event has no view.
            if (e instanceof ServiceError && e.code === 'not_found') return null;
            throw e;
          }),
        ),
      );
      for (const detail of batch) {
        if (detail === null) continue;
        out.push(detail);
        bytes += JSON.stringify(detail).length;
        if (bytes >= STEP_DETAILS_BYTES) return out;
      }
    }
    return out;
  }

  /**
   * Two branches step-aligned (steps matched by their decisions, so an inserted step does
   * not shift the rest), each pair with its verdict and workspace differences; the first
   * divergence in A's numbering counts what the agent saw (overrides, injections).
   */
  async compare(a: string, b: string) {
    const [left, right] = await Promise.all([this.cache.load(a), this.cache.load(b)]);
    const side = (x: ViewedBranch) => ({
      events: x.events,
      snapshots: this.traces.snapshots(x.info.episode),
    });
    const { pairs, diverged_at, diverged_pair, files_differ } = await compareSteps(side(left), side(right), {
      texts: true,
    });
    const [lrows, rrows] = [byStep(left.rows), byStep(right.rows)];
    const rows: CompareRow[] = pairs.map((p) => ({
      step: (p.a_step ?? p.b_step)!,
      a_step: p.a_step,
      b_step: p.b_step,
      verdict: p.verdict,
      differs: [...p.differs],
      a: p.a_step === null ? null : (lrows.get(p.a_step) ?? null),
      b: p.b_step === null ? null : (rrows.get(p.b_step) ?? null),
      same_action: p.verdict !== 'different_action',
      same_result: p.verdict !== 'different_action' && p.verdict !== 'different_result',
      workspace: p.workspace.map((f) => ({ path: f.path, status: f.status, a: f.a ?? null, b: f.b ?? null })),
      workspace_verdict: p.workspace_verdict,
    }));
    const summary = (x: ViewedBranch) => ({ ...x.summary, live: this.episodes.find(x.info.branch) !== null });
    return {
      a: summary(left),
      b: summary(right),
      rows,
      diverged_at,
      diverged_row: diverged_pair,
      files_differ,
      a_flags: [...left.flags],
      b_flags: [...right.flags],
    };
  }

  /**
   * Summaries of every branch of an episode that can be read: a fork whose trace cannot be
   * read is left out of the opened branch's tree (the library names it, with the fix), where
   * it failed the open of every branch of its episode.
   */
  async branchSummaries(episode: string): Promise<BranchSummary[]> {
    const all = await Promise.all(
      this.traces.branchesOf(episode).map(async (info) => {
        try {
          const bt = await this.cache.load(info.branch);
          return { ...bt.summary, live: this.episodes.find(info.branch) !== null };
        } catch (e) {
          if (engineError(e)?.code === 'trace_corrupt') return null;
          throw e;
        }
      }),
    );
    return all.filter((b): b is NonNullable<typeof b> => b !== null);
  }

  /** The state of a live branch (for callers holding a view). */
  stateOf(id: string): EpisodeStateInfo | null {
    return this.episodes.stateOf(id);
  }

  private async changedFiles(bt: ViewedBranch, step: number): Promise<FileChange[]> {
    const snapshot = [...(bt.byStep.get(step) ?? [])].reverse().find((e) => e.type === 'snapshot');
    if (snapshot?.type !== 'snapshot') return [];
    const store = this.traces.snapshots(bt.info.episode);
    const [before, after] = await Promise.all([
      manifestOf(store, snapshotAt(bt.byStep.get(step - 1) ?? [], step - 1)?.manifest ?? null),
      manifestOf(store, snapshot.manifest),
    ]);
    // Step 0 has no step before it: its Files tab is the whole workspace setup left (the
    // count its timeline row says, branch-cache.ts).
    const changed = step === 0 ? setupChanges(snapshot.changed, after) : snapshot.changed;
    const files = await fileChanges(store, before, after, changed);
    // Commands a person typed in the terminal after step k-1 (before this decision) say
    // which files they wrote: those are marked, so the agent is not taken for their author.
    // A command beside which something else could write says so (`others`).
    const byPerson = new Map<string, NonNullable<FileChange['by_person']>>();
    for (const e of bt.byStep.get(step - 1) ?? [])
      if (e.type === 'human_command')
        for (const path of e.files ?? [])
          byPerson.set(path, {
            after_step: step - 1,
            command: e.command,
            ...(e.others ? { others: e.others } : {}),
          });
    return byPerson.size === 0
      ? files
      : files.map((f) => ({ ...f, by_person: byPerson.get(f.path) ?? null }));
  }
}

/** A branch's end as the window shows it: with what the fatal error that ended it said. */
function endOf(end: EndEvent, events: readonly TraceEvent[]): NonNullable<EpisodeView['end']> {
  const detail = endDetail(end, errorsOf(events));
  return {
    status: end.status,
    end_reason: end.end_reason,
    verifier: end.verifier,
    ...(detail === null ? {} : { detail }),
  };
}

function* errorsOf(events: readonly TraceEvent[]) {
  for (const e of events) if (e.type === 'error') yield e;
}

function byStep(rows: readonly StepRow[]): Map<number, StepRow> {
  return new Map(rows.map((r) => [r.step, r]));
}

/** The fields of a recorded task (its header keeps the parsed task, defaults filled) that say its limits. */
const RecordedLimits = z.object({
  max_steps: z.number(),
  timeouts: z.object({ episode: z.number(), step_hard: z.number(), tools: z.record(z.string(), z.number()) }),
  sandbox: z.object({ network: z.string() }),
});

/** A recorded task's limits, or null when its header lacks them. */
function taskLimitsOf(task: Record<string, unknown>): TaskLimits | null {
  const r = RecordedLimits.safeParse(task);
  if (!r.success) return null;
  const { max_steps, timeouts, sandbox } = r.data;
  const limits = TaskLimits.safeParse({
    max_steps,
    episode_s: timeouts.episode,
    step_hard_s: timeouts.step_hard,
    tools_s: timeouts.tools,
    network: sandbox.network,
  });
  return limits.success ? limits.data : null;
}

/**
 * What of its world stepbox left out when the episode started (the header's `world_warnings`),
 * read as recorded input: strings only, each one line of at most 300 characters, at most 64 of
 * them (more than a reader writes: each kind of key is capped at 20 and an "and N more");
 * [] when there are none.
 */
function worldWarningsOf(header: HeaderEvent): string[] {
  const recorded = (header as Record<string, unknown>).world_warnings;
  if (!Array.isArray(recorded)) return [];
  return recorded
    .filter((w): w is string => typeof w === 'string' && w.trim() !== '')
    .slice(0, 64)
    .map((w) => oneLine(w, 300));
}

/** The tool names of a recorded task (its header keeps the parsed task; no list means the defaults). */
function taskToolNames(task: Record<string, unknown>): string[] {
  if (!Array.isArray(task.tools)) return [...DEFAULT_TOOLS];
  return task.tools.flatMap((t: unknown) =>
    typeof t === 'string'
      ? [t]
      : t && typeof t === 'object' && typeof (t as { name?: unknown }).name === 'string'
        ? [(t as { name: string }).name]
        : [],
  );
}
