import type { HeaderEvent, TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import type { RollbackDropped } from '../../../shared/contract/models.js';
import type { BranchInfo, ReadTrace } from './trace-store.js';

/** Where lineage reads branches from: the episode store, or the services' trace port. */
export interface LineageSource {
  resolve(id: string): BranchInfo;
  readTrace(branch: BranchInfo): ReadTrace;
}

/** A branch and the steps it inherits: what every view, check, export and the harness build on. */
/** A branch of a lineage's chain: the fork step it took its history up to, and its header. */
export interface ChainLink {
  readonly branch: string;
  readonly forkStep: number | null;
  readonly header: HeaderEvent;
}

export interface Lineage {
  readonly branch: BranchInfo;
  readonly trace: ReadTrace;
  readonly header: HeaderEvent;
  /**
   * The ancestors' events up to and including their snapshot of the fork step (a fork at
   * K takes steps 1..K, never re-executed), then this branch's own complete events;
   * headers and the ancestors' ends left out.
   */
  readonly events: readonly TraceEvent[];
  /** This branch's incomplete trailing step (views show it; resume and forks never build on it). */
  readonly partial: readonly TraceEvent[];
  /** This branch, then its parent, …: each with the fork step it took its history up to. */
  readonly chain: readonly ChainLink[];
  readonly warnings: readonly string[];
}

/** Forks of forks deeper than this are cut (a recorded parent chain is untrusted input). */
const MAX_DEPTH = 64;

/**
 * THE reader of a branch's lineage (Contracts: a fork at K takes steps 1..K from its
 * parent). A parent chain that loops or runs deeper than 64 stops there with a warning
 * rather than recursing forever.
 */
export function readLineage(source: LineageSource, branch: BranchInfo): Lineage {
  const trace = source.readTrace(branch);
  const own = trace.events.filter((e) => e.type !== 'header');
  const chain: ChainLink[] = [{ branch: branch.branch, forkStep: branch.forkStep, header: trace.header }];
  const warnings = [...trace.warnings];
  const base = { branch, trace, header: trace.header, partial: trace.partial ?? [], chain, warnings };
  if (branch.parentBranch === null || branch.forkStep === null) return { ...base, events: own };
  const walk = ancestorsOf(source, branch);
  warnings.push(...walk.warnings);
  const ancestors: ChainLink[] = [];
  let events: TraceEvent[] = [];
  for (const { info, cut } of walk.ancestors) {
    const t = source.readTrace(info);
    warnings.push(...t.warnings);
    ancestors.push({ branch: info.branch, forkStep: info.forkStep, header: t.header });
    events = cutAtStep([...events, ...t.events.filter((e) => e.type !== 'header')], cut);
  }
  chain.push(...ancestors.reverse());
  return { ...base, events: [...events, ...own] };
}

/**
 * THE walk up a branch's parent chain: its ancestors, oldest first, each with the step
 * the branch below it forked at. A chain that loops, runs deeper than 64 or names a
 * parent that cannot be read stops there, with a warning saying so.
 */
export function ancestorsOf(
  source: Pick<LineageSource, 'resolve'>,
  branch: BranchInfo,
): { ancestors: { info: BranchInfo; cut: number }[]; warnings: string[] } {
  const ancestors: { info: BranchInfo; cut: number }[] = [];
  const warnings: string[] = [];
  const seen = new Set([branch.branch]);
  let child = branch;
  while (child.parentBranch !== null && child.forkStep !== null) {
    if (seen.has(child.parentBranch) || ancestors.length >= MAX_DEPTH) {
      warnings.push(
        `the fork chain of ${branch.branch} ${seen.has(child.parentBranch) ? 'loops' : `is deeper than ${MAX_DEPTH}`} at ${child.parentBranch}: older steps are not shown`,
      );
      break;
    }
    let parent: BranchInfo;
    try {
      parent = source.resolve(child.parentBranch);
    } catch (e) {
      warnings.push(
        `parent ${child.parentBranch} of ${child.branch} cannot be read (${e instanceof Error ? e.message : String(e)}): inherited steps are not shown`,
      );
      break;
    }
    seen.add(parent.branch);
    ancestors.unshift({ info: parent, cut: child.forkStep });
    child = parent;
  }
  return { ancestors, warnings };
}

/** The branch that recorded step `step` of a lineage (an ancestor for inherited steps). */
export function originOf(lineage: Lineage, step: number): string {
  let origin = lineage.chain[0].branch;
  for (let i = 0; i < lineage.chain.length - 1; i++) {
    const fork = lineage.chain[i].forkStep;
    if (fork === null || step > fork) break;
    origin = lineage.chain[i + 1].branch;
  }
  return origin;
}

/**
 * Events up to and including the last snapshot of `step` (the one a restore uses, see
 * {@link snapshotAt}); without one, the events of steps ≤ `step`. Ends are left out.
 */
export function cutAtStep(events: readonly TraceEvent[], step: number): TraceEvent[] {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'snapshot' && e.step === step)
      return events.slice(0, i + 1).filter((x) => x.type !== 'end');
  }
  return events.filter((e) => e.step <= step && e.type !== 'end');
}

/**
 * What a person put into `events` that {@link cutAtStep} at `step` leaves out (`kept` is its
 * answer): messages injected, results overridden or given instead of running the tool, and
 * terminal commands typed after snapshot `step`, each by its step. What a rollback drops.
 */
export function droppedByCut(events: readonly TraceEvent[], kept: readonly TraceEvent[]): RollbackDropped {
  const inKept = new Set(kept);
  const dropped = { injected: [] as number[], overridden: [] as number[], typed: [] as number[] };
  for (const e of events) {
    if (inKept.has(e)) continue;
    if (e.type === 'injected') dropped.injected.push(e.step);
    else if (e.type === 'override' || (e.type === 'tool_result' && e.replaced === true))
      dropped.overridden.push(e.step);
    else if (e.type === 'human_command') dropped.typed.push(e.step);
  }
  return dropped;
}

/** The last snapshot event (the last complete step) of a list of events, or null. */
export function lastSnapshot(events: readonly TraceEvent[]): TraceEventOf<'snapshot'> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'snapshot') return e;
  }
  return null;
}

/** The snapshot of step `step` (the last one recorded, when the step was recorded again), or null. */
export function snapshotAt(events: readonly TraceEvent[], step: number): TraceEventOf<'snapshot'> | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'snapshot' && e.step === step) return e;
  }
  return null;
}
