import type { HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import { readLineage, type Lineage } from '../engine/trace/lineage.js';
import type { BranchInfo, ReadTrace } from '../engine/trace/trace-store.js';
import type { TracePort } from './ports.js';

/** A branch's own trace plus the steps it inherited from its ancestors. */
export interface BranchTrace {
  readonly info: BranchInfo;
  readonly trace: ReadTrace;
  /** The header of this branch. */
  readonly header: HeaderEvent;
  /**
   * The branch's {@link Lineage} events (steps 1..fork_step from the parent chain, then its
   * own), followed by its incomplete trailing step: what a view shows.
   */
  readonly events: readonly TraceEvent[];
  readonly lineage: Lineage;
}

/** Reads a branch with its inherited steps through the one lineage reader. */
export function readBranch(traces: TracePort, id: string): BranchTrace {
  const info = traces.resolve(id);
  const lineage = readLineage({ resolve: (x) => traces.resolve(x), readTrace: (b) => traces.read(b) }, info);
  return {
    info,
    trace: lineage.trace,
    header: lineage.header,
    events: [...lineage.events, ...lineage.partial],
    lineage,
  };
}
