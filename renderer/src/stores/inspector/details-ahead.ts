import type { StepRow } from '../../../../shared/contract/models';

/**
 * Steps on each side of the viewed one whose details the inspector fetches ahead: the rows a
 * person clicks beside the viewed one, or reaches with ←/→, show at once (in the frame of the
 * click) instead of a server round trip later (issue 33.9).
 */
export const DETAILS_AHEAD_EACH_SIDE = 12;

/** One step's detail to hold, under the revision its row shows. */
export interface DetailWanted {
  readonly step: number;
  readonly revision: string;
}

/**
 * What a row shows that its detail depends on: an injection, a person's command, an override or
 * a flag added to a complete step changes it, and the detail cached under the old one is stale.
 */
export function detailRevision(row: StepRow | null): string {
  return row
    ? `${row.injected}${row.human}${row.overridden}${row.flags.length}${row.rollbacks ?? 0}${row.rolled_back_to ?? ''}${row.snapshot}`
    : '';
}

/** True when a step's detail can be cached: the branch is not live, or the step's snapshot is taken. */
export function detailFinal(row: StepRow | null, live: boolean): boolean {
  return !live || (row?.snapshot ?? false);
}

/**
 * What the window asks for when `step` is viewed: the step itself (when complete) first, then
 * its neighbours as {@link detailsAround}, in one call: asked in two (the step's own, then its
 * neighbours'), a click beside a row reached by a far slider move waited for the second call,
 * queued behind the first on a busy server (issue 33.9).
 */
export function detailsToHold(rows: readonly StepRow[], step: number, live: boolean): DetailWanted[] {
  const around = detailsAround(rows, step, live);
  const row = rowOf(rows, step);
  return row && detailFinal(row, live) ? [{ step, revision: detailRevision(row) }, ...around] : around;
}

/** The row of `step` (rows are sorted by step and usually dense: the direct index first). */
function rowOf(rows: readonly StepRow[], step: number): StepRow | undefined {
  const guess = step - (rows[0]?.step ?? 0);
  return rows[guess]?.step === step ? rows[guess] : rows.find((r) => r.step === step);
}

/**
 * The complete steps around `step` (nearest first, alternating after and before, up to `each`
 * on each side) whose details are worth holding; none when `step` is not among `rows`.
 */
export function detailsAround(
  rows: readonly StepRow[],
  step: number,
  live: boolean,
  each = DETAILS_AHEAD_EACH_SIDE,
): DetailWanted[] {
  if (rows.length === 0) return [];
  // Rows are sorted by step and usually dense: the direct index first.
  const guess = step - rows[0].step;
  const at = rows[guess]?.step === step ? guess : rows.findIndex((r) => r.step === step);
  if (at < 0) return [];
  const out: DetailWanted[] = [];
  for (let d = 1; d <= each; d++)
    for (const i of [at + d, at - d]) {
      const row = rows[i];
      if (row && detailFinal(row, live)) out.push({ step: row.step, revision: detailRevision(row) });
    }
  return out;
}
