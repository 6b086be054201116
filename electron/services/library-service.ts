import type {
  BranchSummary,
  CompareRow,
  EpisodeEntry,
  EpisodeStateInfo,
  EpisodeView,
  FileChange,
  FlagSummary,
  SearchHit,
  StepDetail,
  StepRow,
} from '../../shared/contract/index.js';
import { DEFAULT_TOOLS } from '../../shared/task.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import { BranchCache, type LoadedBranch } from './branch-cache.js';
import { manifestAt } from './branch-trace.js';
import { summarizeBranch } from './branch-summary.js';
import type { EpisodeManager } from './episode-manager.js';
import type { TracePort } from './ports.js';
import { ServiceError } from './service-error.js';
import { diffManifests, manifestOf, textAt } from './workspace-files.js';

const DEFAULT_PAGE = 500;
/** Workspace diffs per compared step: enough to see what differs without loading a repo. */
const MAX_DIFF_FILES = 20;

/** The recorded side of the contract: library, opened episodes, trace pages, inspector, compare. */
export class LibraryService {
  private readonly cache: BranchCache;

  constructor(
    private readonly traces: TracePort,
    private readonly episodes: EpisodeManager,
  ) {
    this.cache = new BranchCache(traces);
  }

  async list(query: string | undefined, limit: number): Promise<{ episodes: EpisodeEntry[]; total: number }> {
    const live = new Set(this.episodes.branches());
    const needle = query?.trim().toLowerCase() ?? '';
    const byEpisode = new Map<string, EpisodeEntry>();
    for (const b of await this.traces.listBranches()) {
      const summary: BranchSummary = { ...b, live: live.has(b.branch) };
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
    return { episodes: matching.slice(0, limit), total: matching.length };
  }

  search(query: string, limit: number): Promise<SearchHit[]> {
    return this.traces.search(query, limit);
  }

  /** An opened branch: summary, rows (inherited steps included), flags, branches and live state. */
  async open(id: string): Promise<EpisodeView> {
    const bt = await this.cache.load(id);
    const flags = [...bt.flags];
    const state = this.episodes.stateOf(bt.info.branch);
    const controller = this.episodes.find(bt.info.branch);
    const end = bt.trace.end;
    return {
      summary: summarizeBranch(bt.info, bt.header, bt.events, flags.length, state !== null),
      goal: typeof bt.header.task.goal === 'string' ? bt.header.task.goal : '',
      task_path: bt.header.task_path,
      image: bt.header.image,
      state,
      breakpoints: controller ? [...controller.breakpoints()] : [],
      rows: [...bt.rows],
      branches: await this.branchSummaries(bt.info.episode),
      flags,
      end: end ? { status: end.status, end_reason: end.end_reason, verifier: end.verifier } : null,
      tools: taskToolNames(bt.header.task),
    };
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
    const bt = await this.cache.load(id);
    const events = (bt.byStep.get(step) ?? []).filter((e) => e.type !== 'end');
    if (events.length === 0) throw new ServiceError('not_found', `${bt.info.branch} has no step ${step}`);
    const flags = bt.flags.filter((f) => f.step === step);
    const results = new Map<string, ToolResult>();
    const overrides = new Map<string, { real: ToolResult; shown: ToolResult }>();
    let final: string | null = null;
    let parseError: string | null = null;
    let request: unknown = null;
    let output: StepDetail['model_output'] = null;
    let rewards: StepDetail['rewards'] = null;
    const calls: TraceEvent[] = [];
    for (const e of events) {
      if (e.type === 'tool_call') calls.push(e);
      else if (e.type === 'tool_result') results.set(e.call_id, e.result);
      else if (e.type === 'override') overrides.set(e.call_id, { real: e.real, shown: e.shown });
      else if (e.type === 'action') final = e.final;
      else if (e.type === 'parse_error') parseError = e.message;
      else if (e.type === 'model_request') request = e.request;
      else if (e.type === 'model_output') output = { raw: e.raw, usage: e.usage ?? null };
      else if (e.type === 'reward' && !e.final) rewards = { components: e.components, total: e.total };
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
        e.type === 'human_command' ? [{ command: e.command, exit_code: e.exit_code ?? null }] : [],
      ),
      rewards,
      flags,
      tree_hash: snapshot?.type === 'snapshot' ? snapshot.tree_hash : null,
      events,
    };
  }

  /** Two branches step by step, with per-step workspace differences. */
  async compare(a: string, b: string) {
    const [left, right] = await Promise.all([this.cache.load(a), this.cache.load(b)]);
    const lf = left.flags;
    const rf = right.flags;
    const lrows = byStep(left.rows);
    const rrows = byStep(right.rows);
    const last = Math.max(0, ...lrows.keys(), ...rrows.keys());
    const ls = this.traces.snapshots(left.info.episode);
    const rs = this.traces.snapshots(right.info.episode);
    const rows: CompareRow[] = [];
    let divergedAt: number | null = null;
    for (let step = 1; step <= last; step++) {
      const [le, re] = [left.byStep.get(step) ?? [], right.byStep.get(step) ?? []];
      const sameAction = actionKey(le) === actionKey(re);
      const sameResult = resultKey(le) === resultKey(re);
      if (divergedAt === null && !(sameAction && sameResult)) divergedAt = step;
      const [lm, rm] = [manifestAt(le, step), manifestAt(re, step)];
      const workspace = [];
      if (lm !== rm) {
        const [lman, rman] = await Promise.all([manifestOf(ls, lm), manifestOf(rs, rm)]);
        for (const d of diffManifests(lman, rman).slice(0, MAX_DIFF_FILES)) {
          const [x, y] = await Promise.all([textAt(ls, lman, d.path), textAt(rs, rman, d.path)]);
          workspace.push({ path: d.path, status: d.status, a: x.text, b: y.text });
        }
      }
      rows.push({
        step,
        a: lrows.get(step) ?? null,
        b: rrows.get(step) ?? null,
        same_action: sameAction,
        same_result: sameResult,
        workspace,
      });
    }
    return {
      a: summarizeBranch(
        left.info,
        left.header,
        left.events,
        lf.length,
        this.episodes.find(left.info.branch) !== null,
      ),
      b: summarizeBranch(
        right.info,
        right.header,
        right.events,
        rf.length,
        this.episodes.find(right.info.branch) !== null,
      ),
      rows,
      diverged_at: divergedAt,
    };
  }

  /** Summaries of every branch of an episode. */
  async branchSummaries(episode: string): Promise<BranchSummary[]> {
    return Promise.all(
      this.traces.branchesOf(episode).map(async (info) => {
        const bt = await this.cache.load(info.branch);
        return summarizeBranch(
          info,
          bt.header,
          bt.events,
          bt.flags.length,
          this.episodes.find(info.branch) !== null,
        );
      }),
    );
  }

  /** The state of a live branch (for callers holding a view). */
  stateOf(id: string): EpisodeStateInfo | null {
    return this.episodes.stateOf(id);
  }

  private async changedFiles(bt: LoadedBranch, step: number): Promise<FileChange[]> {
    const snapshot = [...(bt.byStep.get(step) ?? [])].reverse().find((e) => e.type === 'snapshot');
    if (snapshot?.type !== 'snapshot') return [];
    const store = this.traces.snapshots(bt.info.episode);
    const [before, after] = await Promise.all([
      manifestOf(store, manifestAt(bt.byStep.get(step - 1) ?? [], step - 1)),
      manifestOf(store, snapshot.manifest),
    ]);
    return Promise.all(
      snapshot.changed.map(async (c) => {
        const [x, y] = await Promise.all([textAt(store, before, c.path), textAt(store, after, c.path)]);
        return {
          path: c.path,
          change: c.change,
          before: x.text,
          after: y.text,
          binary: x.binary || y.binary,
        };
      }),
    );
  }
}

function byStep(rows: readonly StepRow[]): Map<number, StepRow> {
  return new Map(rows.map((r) => [r.step, r]));
}

function actionKey(events: readonly TraceEvent[]): string {
  const parts: unknown[] = [];
  for (const e of events)
    if (e.type === 'action')
      parts.push(
        e.calls.map((c) => [c.name, c.arguments]),
        e.final,
      );
  return JSON.stringify(parts);
}

function resultKey(events: readonly TraceEvent[]): string {
  const parts: unknown[] = [];
  for (const e of events)
    if (e.type === 'tool_result') {
      const r = e.result;
      parts.push([r.ok, r.exit_code, r.stdout, r.stderr, r.error?.code]);
    }
  return JSON.stringify(parts);
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
