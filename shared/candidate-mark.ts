import { actionText, callText } from './step-summary.js';
import { oneLine } from './one-line.js';
import type { HeaderEvent, TraceEvent } from './trace-events.js';

/**
 * What tells a candidate branch from its siblings (all forked at the same step): its
 * number among the candidates and the action it tried at step K+1.
 */
export interface CandidateMark {
  /** 1-based, as the candidates view numbers its cards (`#2`, "Continue with #2"). */
  readonly number: number;
  /** The action it tried, in the one wording of a decided action ({@link actionText}). */
  readonly action: string;
}

/** How long the action may be in a branch's name (the tree's and compare's lines are narrow). */
const ACTION_MAX = 48;

/**
 * A candidate branch's mark from its trace (its header's `candidate` and the decision of
 * step K+1); null for any other branch.
 */
export function candidateMarkOf(header: HeaderEvent, events: readonly TraceEvent[]): CandidateMark | null {
  // The header is recorded input (a trace or bundle from anywhere): only a whole, in-range
  // index and step name a candidate. Anything else (NaN, -1, 1.5, 1e300, "2") is no candidate,
  // rather than a name like "candidate NaN" or one the contract's positive integer refuses,
  // which would fail the whole branch list.
  const c = header.candidate as { index?: unknown; step?: unknown } | undefined;
  if (!c || typeof c !== 'object' || !isCount(c.index)) return null;
  const k = (isCount(c.step) ? c.step : isCount(header.fork_step) ? header.fork_step : 0) + 1;
  // After an in-step rollback the step's last decision is the one that stands.
  let decided: TraceEvent | null = null;
  for (const e of events) if (e.step === k && (e.type === 'action' || e.type === 'parse_error')) decided = e;
  const action =
    decided?.type === 'action'
      ? decided.calls.length
        ? // Each call as a person reads it (callText: its tool and the argument the timeline's
          // row shows): `execute_shell ls -la`, not `execute_shell {command: "ls -la"}`.
          oneLine(decided.calls.map((c) => callText(c.name, c.arguments)).join('; '), ACTION_MAX)
        : actionText({ calls: decided.calls, final: decided.final }, ACTION_MAX)
      : decided?.type === 'parse_error'
        ? actionText({ calls: [], final: null, parse_error: decided.message }, ACTION_MAX)
        : '(not decided yet)';
  return { number: c.index + 1, action };
}

/** A candidate branch's name, as the episode tree and compare's branch list both say it. */
export function candidateName(m: CandidateMark): string {
  return `candidate ${m.number} · ${m.action}`;
}

/** A whole number from 0 up to 1e9 (candidate indexes and steps). */
function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 1e9;
}
