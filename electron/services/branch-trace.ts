import { readLineage } from '../engine/trace/lineage.js';
import type { BranchTrace, TracePort } from './ports.js';

export type { BranchTrace } from './ports.js';

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
