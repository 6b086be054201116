import { canonicalJson } from '../../../shared/jcs.js';
import { resultKey, type ToolResult } from '../../../shared/tool-result.js';
import { isPersonEdit, type TraceEvent } from '../../../shared/trace-events.js';
import type { DecidedAction } from '../../../shared/step-summary.js';
import { stepRewards } from '../../../shared/rewards.js';

/** One agent step of a branch as a comparison sees it. */
export interface StepFacts {
  readonly step: number;
  /** The decision: calls (name and canonical arguments) or the final answer, or the parse error. */
  readonly action: string;
  /** The same decision, parsed: what a different action names when it says what differs. */
  readonly decision: DecidedAction;
  /** What the agent saw after it: the results shown to it (overrides, fallbacks) and what a person injected. */
  readonly seen: string;
  /** What really happened: the tools' own results. */
  readonly real: string;
  /** The workspace after the step (snapshot k), or null when the step never completed. */
  readonly treeHash: string | null;
  /** The manifest id of that snapshot, or null. */
  readonly manifest: string | null;
  /** The step reward's total, or null when none was recorded. */
  readonly reward: number | null;
  /** True when a person changed what the agent saw at this step (an override or an injection). */
  readonly touched: boolean;
  /** Each call's tool and the result shown to the agent, in call order (what `seen` keys). */
  readonly seenResults: readonly (readonly [string, ToolResult])[];
  /** Each call's tool and its real result, in call order (what `real` keys). */
  readonly realResults: readonly (readonly [string, ToolResult])[];
}

/**
 * Per agent step (a step with an `action` or a `parse_error`), its decision, what the
 * agent saw, what really happened, and its workspace: the keys a step-aligned comparison
 * works on. `events` are a branch's events with its ancestry (header left out).
 */
export function stepFactsOf(events: readonly TraceEvent[]): StepFacts[] {
  const byStep = new Map<number, TraceEvent[]>();
  for (const e of events) {
    if (e.type === 'header' || e.type === 'end') continue;
    const list = byStep.get(e.step);
    if (list) list.push(e);
    else byStep.set(e.step, [e]);
  }
  const out: StepFacts[] = [];
  // An injection made before any decision of its step (e.g. at step 0) is seen by the next decision.
  let carried: TraceEvent[] = [];
  for (const [step, own] of [...byStep].sort((x, y) => x[0] - y[0])) {
    const list = [...carried, ...own];
    const decided = list.filter((e) => e.type === 'action' || e.type === 'parse_error');
    if (decided.length === 0) {
      carried = list.filter((e) => e.type === 'injected');
      continue;
    }
    carried = [];
    // After an in-step rollback the step's last decision is the one that stands.
    const last = decided[decided.length - 1];
    const action =
      last.type === 'action'
        ? canonicalJson({
            calls: last.calls.map((c) => [c.name, c.arguments]),
            final: last.final,
          })
        : canonicalJson({ parse_error: last.raw });
    const overrides = new Map<string, ToolResult>();
    const realOf = new Map<string, ToolResult>();
    const seen: unknown[] = [];
    const real: unknown[] = [];
    let touched = false;
    for (const e of list) {
      if (e.type === 'override') {
        overrides.set(e.call_id, e.shown);
        realOf.set(e.call_id, e.real);
        touched = true;
      } else if (e.type === 'injected') {
        seen.push(['injected', e.role, e.content]);
        touched = true;
      } else if (isPersonEdit(e)) touched = true;
    }
    const seenResults: [string, ToolResult][] = [];
    const realResults: [string, ToolResult][] = [];
    for (const e of list) {
      if (e.type !== 'tool_result') continue;
      const shown = overrides.get(e.call_id) ?? e.result;
      const actual = realOf.get(e.call_id) ?? e.real ?? e.result;
      seen.push([e.name, resultKey(shown)]);
      real.push([e.name, resultKey(actual)]);
      seenResults.push([e.name, shown]);
      realResults.push([e.name, actual]);
    }
    if (last.type === 'parse_error') seen.push(['parse_error', last.message]);
    let treeHash: string | null = null;
    let manifest: string | null = null;
    for (const e of list) {
      if (e.type === 'snapshot') {
        treeHash = e.tree_hash;
        manifest = e.manifest;
      }
    }
    const reward = stepRewards(list).step;
    out.push({
      step,
      action,
      decision:
        last.type === 'action'
          ? { calls: last.calls, final: last.final }
          : { calls: [], final: null, parse_error: last.raw },
      seen: canonicalJson(seen),
      real: canonicalJson(real),
      treeHash,
      manifest,
      reward,
      touched,
      seenResults,
      realResults,
    });
  }
  return out;
}
