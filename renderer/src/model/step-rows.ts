import type { StepRow } from '../../../shared/contract/models';
import type { TraceEvent } from '../../../shared/trace-events';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const SUMMARY_MAX = 80;

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SUMMARY_MAX ? `${line.slice(0, SUMMARY_MAX - 1)}…` : line;
}

/** A one-line summary of tool arguments: the command or path when there is one. */
export function summarizeArgs(args: Record<string, unknown>): string {
  const main = args.command ?? args.path ?? args.key ?? args.query;
  return clip(typeof main === 'string' ? main : JSON.stringify(args));
}

function emptyRow(step: number): Mutable<StepRow> {
  return {
    step,
    tools: [],
    summary: '',
    status: 'pending',
    duration_ms: null,
    injected: false,
    human: false,
    overridden: false,
    reward: null,
    rewards: {},
    flags: [],
    snapshot: false,
  };
}

/** Folds one live event into its step's row (the row is a private copy). */
function applyEvent(row: Mutable<StepRow>, event: TraceEvent): void {
  switch (event.type) {
    case 'action':
      if (event.final !== null && event.calls.length === 0) {
        row.tools = ['final'];
        row.summary = clip(event.final);
        row.status = 'final';
      }
      return;
    case 'tool_call':
      row.tools = [...row.tools, event.name];
      if (!row.summary) row.summary = summarizeArgs(event.arguments);
      return;
    case 'tool_result': {
      const r = event.result;
      row.duration_ms = (row.duration_ms ?? 0) + r.duration_ms;
      if (!r.ok) row.status = 'tool_error';
      else if (row.status !== 'tool_error')
        row.status = r.exit_code !== undefined && r.exit_code !== 0 ? 'nonzero_exit' : 'ok';
      return;
    }
    case 'parse_error':
      row.status = 'parse_error';
      if (!row.summary) row.summary = clip(event.message);
      return;
    case 'injected':
      row.injected = true;
      return;
    case 'human_command':
      row.human = true;
      return;
    case 'override':
      row.overridden = true;
      return;
    case 'reward':
      if (!event.final) {
        row.reward = event.total;
        row.rewards = event.components;
      }
      return;
    case 'snapshot':
      row.snapshot = true;
      return;
    default:
      return;
  }
}

/** Adds live events to the timeline rows, copying only the rows they touch. */
export function foldEvents(rows: readonly StepRow[], events: readonly TraceEvent[]): readonly StepRow[] {
  if (events.length === 0) return rows;
  const next = [...rows];
  const copied = new Set<number>();
  for (const event of events) {
    if (event.step < 1) continue;
    // Live steps arrive in order, so the row is almost always the last one.
    let at = next.length - 1;
    while (at >= 0 && next[at].step > event.step) at--;
    if (at < 0 || next[at].step !== event.step) {
      next.splice(at + 1, 0, emptyRow(event.step));
      at += 1;
      copied.add(event.step);
    } else if (!copied.has(event.step)) {
      next[at] = { ...next[at] };
      copied.add(event.step);
    }
    applyEvent(next[at] as Mutable<StepRow>, event);
  }
  return next;
}
