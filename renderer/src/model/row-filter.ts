import type { StepRow } from '../../../shared/contract/models';

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
  const hay = `${row.tools.join(' ')} ${row.summary} ${row.flags.map((f) => `${f.rule} ${f.message}`).join(' ')}`;
  return hay.toLowerCase().includes(needle);
}

/**
 * The filter's count in words. While earlier rows are still arriving (`arriving` of them: an
 * open brings the last screenful first) it counts what is loaded as such: "16 of 200 shown"
 * over a 301-row branch claimed a total it did not have.
 */
export function filterCountText(shown: number, loaded: number, arriving: number): string {
  if (arriving <= 0) return `${shown} of ${loaded} shown`;
  return `${shown} shown · ${loaded} of ${loaded + arriving} loaded…`;
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
