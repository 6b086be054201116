import type { ToolResult } from '../tool-result.js';
import type { TraceEvent } from '../trace-events.js';
import type { FlagSummary, StepRow, StepStatus } from './models.js';

const SUMMARY_MAX = 160;

/** A one-line summary of a tool call's arguments: the command, the path, or compact JSON. */
export function summarizeArguments(name: string, args: Record<string, unknown>): string {
  const pick = name === 'execute_shell' ? args.command : (args.path ?? args.key ?? args.query);
  const text = typeof pick === 'string' ? pick : JSON.stringify(args);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > SUMMARY_MAX ? `${line.slice(0, SUMMARY_MAX - 1)}…` : line;
}

function emptyRow(step: number): StepRow {
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

function statusAfter(row: StepRow, result: ToolResult): StepStatus {
  if (row.status === 'tool_error' || !result.ok) return 'tool_error';
  if (row.status === 'nonzero_exit' || (result.exit_code !== undefined && result.exit_code !== 0))
    return 'nonzero_exit';
  return 'ok';
}

/** Applies one event to a row; returns the same row when the event does not touch it. */
function applyToRow(row: StepRow, event: TraceEvent): StepRow {
  switch (event.type) {
    case 'action':
      if (event.final !== null && event.calls.length === 0)
        return { ...row, status: 'final', summary: summarizeArguments('final', { text: event.final }) };
      return {
        ...row,
        tools: event.calls.map((c) => c.name),
        summary: event.calls.map((c) => summarizeArguments(c.name, c.arguments)).join(' ; '),
      };
    case 'parse_error':
      return { ...row, status: 'parse_error', summary: row.summary || event.message.slice(0, SUMMARY_MAX) };
    case 'tool_call':
      return row.tools.length > 0
        ? row
        : { ...row, tools: [event.name], summary: summarizeArguments(event.name, event.arguments) };
    case 'tool_result':
      return {
        ...row,
        status: statusAfter(row, event.result),
        duration_ms: (row.duration_ms ?? 0) + event.result.duration_ms,
      };
    case 'injected':
      return { ...row, injected: true };
    case 'override':
      return { ...row, overridden: true };
    case 'human_command':
      return { ...row, human: true };
    case 'reward':
      return event.final ? row : { ...row, reward: event.total, rewards: { ...event.components } };
    case 'snapshot':
      return { ...row, snapshot: true };
    default:
      return row;
  }
}

/**
 * Folds one trace event into timeline rows (rows sorted by step, step 0 has none) and
 * returns the new array, or the same array when nothing changed. A rollback to k drops
 * the rows after k: the branch continues from there. Used by the services for recorded
 * traces and by the window for live `episode.event`s, so both show the same rows.
 */
export function applyEventToRows(rows: readonly StepRow[], event: TraceEvent): readonly StepRow[] {
  if (event.type === 'rollback') {
    const keep = rows.filter((r) => r.step <= event.to_step);
    return keep.length === rows.length ? rows : keep;
  }
  if (event.step < 1 || event.type === 'header' || event.type === 'end') return rows;
  let index = rows.length - 1;
  while (index >= 0 && rows[index].step > event.step) index--;
  const existing = index >= 0 && rows[index].step === event.step ? rows[index] : null;
  // A new decision for a step that already completed (after a rollback) starts the row afresh.
  const base = existing && !(event.type === 'action' && existing.snapshot) ? existing : emptyRow(event.step);
  const next = applyToRow(base, event);
  if (next === existing) return rows;
  const out = rows.slice();
  if (existing) out[index] = next;
  else out.splice(index + 1, 0, next);
  return out;
}

/** The timeline rows of a whole trace, with QA flags attached to the steps they point at (linear time). */
export function stepRowsOf(events: readonly TraceEvent[], flags: readonly FlagSummary[] = []): StepRow[] {
  const rows = new Map<number, StepRow>();
  for (const event of events) {
    if (event.type === 'rollback') {
      for (const step of [...rows.keys()]) if (step > event.to_step) rows.delete(step);
      continue;
    }
    if (event.step < 1 || event.type === 'header' || event.type === 'end') continue;
    const existing = rows.get(event.step);
    const base =
      existing && !(event.type === 'action' && existing.snapshot) ? existing : emptyRow(event.step);
    rows.set(event.step, applyToRow(base, event));
  }
  const byStep = new Map<number, FlagSummary[]>();
  for (const f of flags) byStep.set(f.step, [...(byStep.get(f.step) ?? []), f]);
  return [...rows.values()]
    .sort((a, b) => a.step - b.step)
    .map((r) => (byStep.has(r.step) ? { ...r, flags: byStep.get(r.step) ?? [] } : r));
}
