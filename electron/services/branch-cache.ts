import type { BranchSummary, FlagSummary, StepRow } from '../../shared/contract/index.js';
import { stepRowsOf } from '../../shared/contract/index.js';
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

/**
 * Keeps the last few branches the window looked at, parsed and derived, keyed by their
 * trace files' versions (and their ancestors'): scrubbing a 10,000-step episode reads and
 * checks its trace once, not once per step. A live branch's new step changes its version.
 */
export class BranchCache {
  private readonly entries = new Map<string, { version: string; loaded: ViewedBranch }>();

  constructor(
    private readonly traces: TracePort,
    private readonly max = 12,
  ) {}

  /** The branch, parsed, checked and derived (from the cache while its trace files are unchanged). */
  async load(id: string): Promise<ViewedBranch> {
    const info = this.traces.resolve(id);
    const version = this.versionOf(info);
    const hit = this.entries.get(info.branch);
    if (hit && hit.version === version) {
      // Most recently used last, so the oldest is evicted first.
      this.entries.delete(info.branch);
      this.entries.set(info.branch, hit);
      return hit.loaded;
    }
    const bt = readBranch(this.traces, info.branch);
    const flags = await flagsOfBranch(this.traces, bt);
    const byStep = new Map<number, TraceEvent[]>();
    for (const e of bt.events) {
      const list = byStep.get(e.step);
      if (list) list.push(e);
      else byStep.set(e.step, [e]);
    }
    const loaded: ViewedBranch = {
      ...bt,
      flags,
      rows: stepRowsOf(bt.events, flags),
      byStep,
      summary: summarizeBranch(bt.info, bt.header, bt.events, flags.length, false),
    };
    this.entries.delete(info.branch);
    this.entries.set(info.branch, { version, loaded });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    return loaded;
  }

  /** The versions of the branch's trace file and its ancestors' (what it inherits is read from theirs). */
  private versionOf(info: BranchInfo): string {
    const { ancestors } = ancestorsOf(this.traces, info);
    return [info, ...ancestors.reverse().map((a) => a.info)].map((b) => this.traces.version(b)).join('|');
  }
}
