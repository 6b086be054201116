import type { EndEvent, HeaderEvent } from '../../../shared/trace-events.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import { summarizeSteps, type StepSummary } from '../../../shared/step-summary.js';
import { originOf, readLineage, type LineageSource } from './lineage.js';
import type { BranchInfo } from './trace-store.js';

/** A step of a branch's timeline: where it was recorded, and whether its step is incomplete. */
export interface TimelineStep extends StepSummary {
  /** The branch whose trace recorded it (an ancestor's for steps a fork inherited). */
  readonly branch: string;
  /** True for the incomplete trailing step of an unclosed or interrupted trace. */
  readonly partial: boolean;
}

/** A branch's full history: inherited steps 1..K from its ancestors, then its own. */
export interface BranchTimeline {
  readonly branch: BranchInfo;
  readonly header: HeaderEvent;
  readonly end: EndEvent | null;
  readonly steps: readonly TimelineStep[];
  readonly warnings: readonly string[];
  /** Each call's result as the agent saw it (an override's `shown`), by `step:call_id`: the output text `show --json` gives. */
  readonly results: ReadonlyMap<string, ToolResult>;
}

/**
 * A branch's steps for `show`, exports and reports: {@link readLineage} folded by the
 * shared per-step reducer (the window's rows are the same fold), the incomplete last
 * step included and marked. Step 0 (setup) is included.
 */
export function branchTimeline(source: LineageSource, branch: BranchInfo): BranchTimeline {
  const lineage = readLineage(source, branch);
  const partialSteps = new Set(lineage.partial.map((e) => e.step));
  const complete = new Set(lineage.events.filter((e) => e.type === 'snapshot').map((e) => e.step));
  const steps = summarizeSteps([...lineage.events, ...lineage.partial]).map((s) => ({
    ...s,
    branch: originOf(lineage, s.step),
    partial: partialSteps.has(s.step) && !complete.has(s.step),
  }));
  const results = new Map<string, ToolResult>();
  for (const e of [...lineage.events, ...lineage.partial]) {
    if (e.type === 'tool_result') results.set(`${e.step}:${e.call_id}`, e.result);
    else if (e.type === 'override') results.set(`${e.step}:${e.call_id}`, e.shown);
  }
  return {
    branch,
    header: lineage.header,
    end: lineage.trace.end,
    steps,
    warnings: lineage.warnings,
    results,
  };
}
