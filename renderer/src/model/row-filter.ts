import { ruleLabel } from '../../../shared/qa/rule-label';
import type { StepRow } from '../../../shared/contract/models';
import { countOf } from '../../../shared/count-of';

/** What the timeline shows: every row, or those matching a kind and a text. */
export interface RowFilter {
  /** `all`, `error` (failed, non-zero or unparsable), `flag` (a QA flag), or `tool:NAME`. */
  readonly kind: string;
  /** Matched, case-insensitively, against the tools, the arguments and the flags. */
  readonly text: string;
}

/** No filter. */
export const NO_FILTER: RowFilter = { kind: 'all', text: '' };

/** True when the filter hides nothing. */
export function isFilterEmpty(f: RowFilter): boolean {
  return f.kind === 'all' && f.text.trim() === '';
}

function matchesKind(row: StepRow, kind: string): boolean {
  if (kind === 'all') return true;
  if (kind === 'error')
    return row.status === 'tool_error' || row.status === 'nonzero_exit' || row.status === 'parse_error';
  if (kind === 'flag') return row.flags.length > 0;
  if (kind.startsWith('tool:')) return row.tools.includes(kind.slice('tool:'.length));
  return true;
}

function matchesText(row: StepRow, needle: string): boolean {
  if (needle === '') return true;
  if (String(row.step) === needle) return true;
  const hay = `${row.tools.join(' ')} ${row.summary} ${row.flags.map((f) => `${f.rule} ${ruleLabel(f.rule)} ${f.message}`).join(' ')}`;
  return hay.toLowerCase().includes(needle);
}

/**
 * True for the setup row (step 0: the sandbox made ready, before the agent's first decision).
 * It is not a step: the timeline's header ("10000 steps") and the filter's count both count
 * steps by this one rule. Rows still arriving begin with it (an open brings the last rows first).
 */
export function isSetupRow(row: StepRow): boolean {
  return row.step === 0;
}

/**
 * The filter's count in words, counting steps as the header does (the setup row apart). While
 * earlier rows are still arriving (`arriving` of them, the setup among them) it says that only
 * the loaded steps were searched, and how many are still to come: "199 shown · 200 of 10001
 * loaded…" hid that, and counted the setup as a step beside a header of "10000 steps".
 */
export function filterCountText(
  shown: readonly StepRow[],
  loaded: readonly StepRow[],
  arriving: number,
): string {
  const matches = shown.filter((r) => !isSetupRow(r)).length;
  const setup = shown.some(isSetupRow) ? ', and the setup' : '';
  const steps = loaded.filter((r) => !isSetupRow(r)).length;
  const found = countOf(matches, 'match', 'matches');
  if (arriving <= 0) return `${found} in ${countOf(steps, 'step')}${setup}`;
  // The setup row arrives with the earliest page: it is among `arriving`, and not a step.
  const still = arriving - 1;
  return `${found} in the ${countOf(steps, 'step')} loaded so far${setup} · ${still} still loading`;
}

/** The rows the filter keeps, in order (the same array when it keeps all). */
export function filterRows(rows: readonly StepRow[], f: RowFilter): readonly StepRow[] {
  if (isFilterEmpty(f)) return rows;
  const needle = f.text.trim().toLowerCase();
  return rows.filter((r) => matchesKind(r, f.kind) && matchesText(r, needle));
}

/** The index of `step` among sorted rows (binary search: 10,000 rows on every scrub), or -1. */
export function indexOfStep(rows: readonly StepRow[], step: number): number {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = rows[mid].step;
    if (s === step) return mid;
    if (s < step) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
