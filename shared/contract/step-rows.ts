import {
  decidedDetail,
  emptyStep,
  foldStep,
  outcomeText,
  foldSteps,
  notOfferedTools,
  rowStepOf,
  stepDuration,
  type ResultOutcome,
  type StepSummary,
} from '../step-summary.js';
import { oneLine } from '../one-line.js';
import { assertNever } from '../assert-never.js';
import type { TraceEvent } from '../trace-events.js';
import type { FlagSummary, StepRow, StepStatus } from './models.js';
import { countOf } from '../count-of.js';

function statusOf(s: StepSummary): StepStatus {
  switch (s.kind) {
    case 'setup':
      return 'setup';
    case 'final':
      return 'final';
    case 'parse_error':
      return 'parse_error';
    case 'none':
      return 'pending';
    case 'tool':
      if (s.results.length === 0) return 'pending';
      if (s.results.some((r) => !r.ok)) return 'tool_error';
      if (s.results.some((r) => r.exit_code !== null && r.exit_code !== 0)) return 'nonzero_exit';
      return 'ok';
    default:
      return assertNever(s.kind, 'step kind');
  }
}

/**
 * The exit code a `nonzero_exit` row says (`exit 1`, as the inspector says it): its first call
 * that exited non-zero; absent on other rows (the table said "exit≠0" beside the inspector's "exit 1").
 */
function exitOf(s: StepSummary): { exit_code?: number } {
  const code = s.results.find((r) => r.ok && r.exit_code !== null && r.exit_code !== 0)?.exit_code;
  return code == null ? {} : { exit_code: code };
}

/**
 * The setup row's words: `setup · 4 files`, the files its Files tab lists (the server counts
 * them from snapshot 0's manifest, branch-cache.ts; folded from events alone, what setup changed).
 */
export function setupSummary(files: number | null): string {
  return files === null ? 'setup' : `setup · ${countOf(files, 'file')}`;
}

function summaryOf(s: StepSummary): string {
  switch (s.kind) {
    case 'setup':
      return setupSummary(s.changed);
    case 'final':
      return oneLine(s.final ?? '', 160);
    case 'parse_error':
      return oneLine(s.parse_error ?? '', 160);
    case 'tool':
      return s.calls.map((c) => c.detail).join(' ; ');
    case 'none':
      return '';
    default:
      return assertNever(s.kind, 'step kind');
  }
}

/** One timeline row of a step summary (the window's projection of the shared per-step reducer). */
export function rowOf(s: StepSummary, flags: readonly FlagSummary[] = []): StepRow {
  const fatal = s.errors.find((e) => e.fatal) ?? s.errors[0];
  const real = s.results.filter((r) => r.real !== null);
  // A call of a tool the task does not offer is refused before it runs (a parse error): the row
  // still names the tool the agent asked for, marked as not offered; a call that reached the
  // registry and came back `unknown_tool` (an external agent's) is marked the same.
  const refused = s.kind === 'parse_error' ? notOfferedTools(s.parse_error) : [];
  const unknown = s.results.filter((r) => r.error_code === 'unknown_tool').map((r) => r.name);
  const notOffered = [...new Set([...refused, ...unknown])];
  // A step decided and held before it ran (no call made): its row names the decided calls, not
  // nothing (a released step's row had an empty tool cell beside the inspector's held call).
  const notRun = s.kind === 'none' && s.decided.length > 0;
  // A refused call of a tool the task does not offer reads as the agent made it, its name and
  // arguments: the parser's words (`tool call 1: "run_tests" is not an enabled tool …`) filled
  // the arguments cell; they stay in the inspector, which explains the refusal.
  const asDecided = notRun || (refused.length > 0 && s.decided.length > 0);
  return {
    step: s.step,
    tools: asDecided ? s.decided.map((c) => c.name) : [...s.calls.map((c) => c.name), ...refused],
    ...(notOffered.length ? { not_offered: notOffered } : {}),
    ...(notRun ? { not_run: true } : {}),
    summary: asDecided ? s.decided.map(decidedDetail).join(' ; ') : summaryOf(s),
    status: statusOf(s),
    ...exitOf(s),
    duration_ms: stepDuration(s.results),
    injected: s.injected.some((i) => i.type === 'injected'),
    human: s.injected.some((i) => i.type === 'human_command'),
    overridden: s.injected.some((i) => i.type === 'override' || i.type === 'replaced'),
    edited: s.injected.some((i) => i.type === 'edit'),
    reward: s.reward,
    rewards: s.reward_components as Record<string, number>,
    flags: flags as FlagSummary[],
    snapshot: s.changed !== null,
    error: fatal ? `${fatal.code}: ${oneLine(fatal.message, 160)}` : null,
    real: real.length
      ? real
          .map((r) => `${r.name}: ${outcomeText(r.real as ResultOutcome)} (agent saw ${outcomeText(r)})`)
          .join(' ; ')
      : null,
    rollbacks: s.rollbacks.filter((r) => r.mid_step).length,
    rolled_back_to: s.rollbacks.filter((r) => !r.mid_step).at(-1)?.to_step ?? null,
    drift: driftOf(s),
  };
}

/** The drift warnings of a step (a re-run agent inside the sandbox saw other tool outputs), or null. */
function driftOf(s: StepSummary): string | null {
  const drift = s.warnings.filter((w) => w.code === 'drift').map((w) => w.message);
  return drift.length ? drift.join(' ; ') : null;
}

/**
 * The rows with each step's QA flags set to those of `flags` (none where it has none): a row
 * whose flags are already those is the same object back, so a live timeline given new flags
 * redraws only the rows they changed.
 */
export function withFlags(rows: readonly StepRow[], flags: readonly FlagSummary[]): StepRow[] {
  const byStep = new Map<number, FlagSummary[]>();
  for (const f of flags) byStep.set(f.step, [...(byStep.get(f.step) ?? []), f]);
  return rows.map((r) => {
    const mine = byStep.get(r.step) ?? [];
    return sameFlags(r.flags, mine) ? r : { ...r, flags: mine };
  });
}

function sameFlags(a: readonly FlagSummary[], b: readonly FlagSummary[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (f, i) =>
        f.rule === b[i].rule &&
        f.step === b[i].step &&
        f.message === b[i].message &&
        f.severity === b[i].severity,
    )
  );
}

/**
 * The timeline rows of a branch's events (steps in order, step 0 the setup row), with QA
 * flags attached to the steps they point at; linear time. The incomplete last step of a
 * trace is a row too (no snapshot), and a rollback inside a step never removes it.
 */
export function stepRowsOf(events: readonly TraceEvent[], flags: readonly FlagSummary[] = []): StepRow[] {
  return withFlags(
    foldSteps(events).map((s) => rowOf(s)),
    flags,
  );
}

/**
 * Rows being folded live: `steps` holds the summaries of the steps whose events all
 * arrived live (so each new event folds through the same reducer as a recorded trace).
 */
export interface LiveRows {
  readonly rows: readonly StepRow[];
  /** Owned by the fold and updated in place (copying it per event would make a long run quadratic). */
  readonly steps: Map<number, StepSummary>;
  /**
   * True when an event touched a step whose row came from a recorded view (its earlier
   * events are not here): the caller reloads the view rather than guess.
   */
  readonly stale: boolean;
}

/** Live rows starting from a loaded view's rows. */
export function liveRowsOf(rows: readonly StepRow[]): LiveRows {
  return { rows, steps: new Map(), stale: false };
}

/** Folds one live trace event into the rows (the same array back when nothing changed). */
export function applyEventToRows(live: LiveRows, event: TraceEvent): LiveRows {
  if (rowStepOf(event) === null) return live;
  const { rows } = live;
  let index = rows.length - 1;
  while (index >= 0 && rows[index].step > event.step) index--;
  const existing = index >= 0 && rows[index].step === event.step ? rows[index] : null;
  const known = live.steps.get(event.step);
  if (existing && !known) return live.stale ? live : { ...live, stale: true };
  const next = foldStep(known ?? emptyStep(event.step), event);
  if (next === known) return live;
  const { steps } = live;
  steps.set(event.step, next);
  const row = rowOf(next, existing?.flags ?? []);
  const out = rows.slice();
  if (existing) out[index] = row;
  else out.splice(index + 1, 0, row);
  return { rows: out, steps, stale: live.stale };
}
