import type { BranchSummary, FlagSummary, StepRow } from '../../shared/contract/index.js';
import { setupSummary, stepRowsOf } from '../../shared/contract/index.js';
import { setupChanges } from './workspace-files.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import { ancestorsOf } from '../engine/trace/lineage.js';
import type { BranchInfo } from '../engine/trace/trace-store.js';
import { readBranch, type BranchTrace } from './branch-trace.js';
import { flagsOfBranch, summarizeBranch } from './branch-summary.js';
import type { TracePort } from './ports.js';

/**
 * A branch as the window views it, read once and derived once: its lineage (BranchTrace),
 * QA flags, timeline rows, events by step. (QA, reports and exports judge an engine
 * `LoadedBranch`: one trace file; this one adds what a view needs.)
 */
export interface ViewedBranch extends BranchTrace {
  readonly flags: readonly FlagSummary[];
  readonly rows: readonly StepRow[];
  readonly byStep: ReadonlyMap<number, readonly TraceEvent[]>;
  /**
   * The branch's summary as not live (spread `live` over it): a pass over every event, which
   * each open of a 10,000-step branch made twice (its own and the branch tree's).
   */
  readonly summary: BranchSummary;
}

/** A branch kept: what the window saw, the version it was read at, and what that version is made of. */
interface Entry {
  readonly version: string;
  /** The branch, then its ancestors: the trace files {@link Entry.version} is made of. */
  readonly lineage: readonly BranchInfo[];
  readonly loaded: ViewedBranch;
}

/**
 * Keeps the last few branches the window looked at, parsed and derived, keyed by their
 * trace files' versions (and their ancestors'): scrubbing a 10,000-step episode reads and
 * checks its trace once, not once per step. A live branch's new step changes its version.
 */
export class BranchCache {
  /** Each branch kept, by its id. */
  private readonly entries = new Map<string, Entry>();
  /** Files step 0 shows, by episode and snapshot-0 manifest (a snapshot never changes). */
  private readonly setupFiles = new Map<string, number>();

  constructor(
    private readonly traces: TracePort,
    private readonly max = 12,
  ) {}

  /** The branch, parsed, checked and derived (from the cache while its trace files are unchanged). */
  async load(id: string): Promise<ViewedBranch> {
    const kept = this.unchanged(id);
    if (kept) return kept;
    const info = this.traces.resolve(id);
    const lineage = this.lineageOf(info);
    const version = this.versionOf(lineage);
    const hit = this.entries.get(info.branch);
    if (hit && hit.version === version) return this.touch(info.branch, hit).loaded;
    const bt = readBranch(this.traces, info.branch);
    const flags = await flagsOfBranch(this.traces, bt);
    const byStep = new Map<number, TraceEvent[]>();
    for (const e of bt.events) {
      const list = byStep.get(e.step);
      if (list) list.push(e);
      else byStep.set(e.step, [e]);
    }
    const rows = stepRowsOf(bt.events, flags);
    const loaded: ViewedBranch = {
      ...bt,
      flags,
      rows: await this.withSetupFiles(bt.info.episode, rows, byStep.get(0) ?? []),
      byStep,
      summary: summarizeBranch(bt.info, bt.header, bt.events, flags.length, false),
    };
    this.touch(info.branch, { version, lineage, loaded });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    return loaded;
  }

  /**
   * The branch `id` names exactly (a branch id, or an episode id: its main branch) as kept,
   * when none of the trace files it was read from changed; else undefined (resolved and read
   * again). Resolving reads the store's folders (the episode's meta.json, parsed, and its
   * branches folder, for the branch and each ancestor): it ran for every step the inspector
   * showed and every neighbour fetched ahead, ~1 ms each, while a click waited (issue 33.9;
   * it scanned every episode then, see DiskEpisodeStore.resolve). Which branch
   * an exact id names, and its ancestors, never change; a branch or episode deleted takes its
   * trace file with it, and the stat's failure sends it to the store, which says so.
   */
  private unchanged(id: string): ViewedBranch | undefined {
    const hit = this.entries.get(id);
    if (!hit) return undefined;
    let version: string;
    try {
      version = this.versionOf(hit.lineage);
    } catch {
      return undefined;
    }
    return version === hit.version ? this.touch(id, hit).loaded : undefined;
  }

  /** Marks an entry most recently used (Map order), so the oldest is evicted first. */
  private touch(branch: string, entry: Entry): Entry {
    this.entries.delete(branch);
    this.entries.set(branch, entry);
    return entry;
  }

  /**
   * The rows with the setup row counting the files step 0's Files tab lists (setupChanges):
   * from the trace alone it counted what setup changed, "0 files" for a project folder of 4.
   * Counted once per snapshot (its manifest is read once, not at every step of a live branch).
   */
  private async withSetupFiles(
    episode: string,
    rows: StepRow[],
    step0: readonly TraceEvent[],
  ): Promise<StepRow[]> {
    const snapshot = step0.find((e) => e.type === 'snapshot');
    if (rows[0]?.step !== 0 || snapshot?.type !== 'snapshot') return rows;
    const key = `${episode}/${snapshot.manifest}`;
    let files = this.setupFiles.get(key);
    if (files === undefined) {
      const manifest = await this.traces
        .snapshots(episode)
        .getManifest(snapshot.manifest)
        // Unreadable, the row keeps the trace's count; the Files tab says why when opened.
        .catch(() => null);
      if (manifest === null) return rows;
      files = setupChanges(snapshot.changed, manifest).length;
      this.setupFiles.set(key, files);
    }
    if (files === snapshot.changed.length) return rows;
    return [{ ...rows[0], summary: setupSummary(files) }, ...rows.slice(1)];
  }

  /** The branch, then its ancestors (what it inherits is read from their trace files). */
  private lineageOf(info: BranchInfo): BranchInfo[] {
    const { ancestors } = ancestorsOf(this.traces, info);
    return [info, ...ancestors.reverse().map((a) => a.info)];
  }

  /** The versions of the trace files of a branch's lineage ({@link lineageOf}). */
  private versionOf(lineage: readonly BranchInfo[]): string {
    return lineage.map((b) => this.traces.version(b)).join('|');
  }
}
