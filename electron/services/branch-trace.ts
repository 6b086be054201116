import type { TraceEvent } from '../../shared/trace-events.js';
import type { BranchInfo, ReadTrace } from '../engine/trace/trace-store.js';
import type { BranchTrace, TracePort } from './ports.js';

export type { BranchTrace } from './ports.js';

const MAX_DEPTH = 64;

/** Reads a branch with its inherited steps (forks of forks follow the chain). */
export function readBranch(traces: TracePort, id: string): BranchTrace {
  const info = traces.resolve(id);
  const trace = traces.read(info);
  return { info, trace, header: trace.header, events: withAncestors(traces, info, trace, 0) };
}

function withAncestors(traces: TracePort, info: BranchInfo, trace: ReadTrace, depth: number): TraceEvent[] {
  const own = trace.events.filter((e) => e.type !== 'header');
  if (info.parentBranch === null || info.forkStep === null || depth >= MAX_DEPTH) return own;
  const parentInfo = traces.branchesOf(info.episode).find((b) => b.branch === info.parentBranch);
  if (!parentInfo) return own;
  const inherited = withAncestors(traces, parentInfo, traces.read(parentInfo), depth + 1).filter(
    (e) =>
      e.type !== 'end' && e.step <= (info.forkStep ?? 0) && !(e.type === 'snapshot' && ownHas(own, e.step)),
  );
  return [...inherited, ...own];
}

function ownHas(own: readonly TraceEvent[], step: number): boolean {
  return own.some((e) => e.type === 'snapshot' && e.step === step);
}

/** The manifest id of snapshot k of a branch's events (the last one, after rollbacks), or null. */
export function manifestAt(events: readonly TraceEvent[], step: number): string | null {
  let found: string | null = null;
  for (const e of events) if (e.type === 'snapshot' && e.step === step) found = e.manifest;
  return found;
}
