import { caseNameProblem } from '../../../../shared/case-name';
import { safeStorage } from '../../model/safe-storage';
import type { ActiveCase, CaseVariant } from './episodes-store';

const KEY = 'stepbox.case-runs.v1';
/** Cases remembered at most (the most recently run kept), and runs of each: a page of JSON, no more. */
const MAX_CASES = 50;
const MAX_RUNS = 20;

/** Each case's runs, as the case drawer pairs them: its latest run of each variant, and every run it started. */
export interface CaseRunsRemembered {
  readonly runs: Map<string, ActiveCase['runs']>;
  readonly started: Map<string, Map<string, CaseVariant>>;
  /**
   * What of the stored memory was left out and why (edited by hand, another version, written by
   * something else): said once in the window, so a case that starts afresh is not a mystery.
   */
  readonly refused?: string;
}

const variantOf = (v: unknown): CaseVariant | null => (v === 'broken' || v === 'fixed' ? v : null);

/** A branch id as the store makes them (`ep-…`, `b-…`): letters, digits, `_` and `-`, nothing to escape with. */
const BRANCH_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The case runs this window started before a reload (localStorage): without them a click on a
 * case's card after a reload started a new broken run instead of reopening the one that ended.
 * The storage is outside the app's control (edited by hand, another version, anything running in
 * the page's origin), so it is parsed here: a case id, a variant, a branch id of the store's shape,
 * at most {@link MAX_CASES} cases of {@link MAX_RUNS} runs. What does not fit is left out and said
 * in `refused`; a remembered run is still only a hint (the store reopens it only when the
 * library lists it as a run of the case's own task: see `openCase`).
 */
export function loadCaseRuns(storage: Pick<Storage, 'getItem'> | null = safeStorage()): CaseRunsRemembered {
  const runs = new Map<string, ActiveCase['runs']>();
  const started = new Map<string, Map<string, CaseVariant>>();
  const refused: string[] = [];
  let raw: string | null | undefined;
  let saved: unknown;
  try {
    raw = storage?.getItem(KEY);
    saved = raw ? JSON.parse(raw) : {};
  } catch (e) {
    return { runs, started, refused: `it is not JSON (${(e as Error).message})` };
  }
  if (!saved || typeof saved !== 'object' || Array.isArray(saved))
    return { runs, started, refused: 'it is not an object of cases' };
  const entries = Object.entries(saved as Record<string, unknown>);
  if (entries.length > MAX_CASES)
    refused.push(`${entries.length - MAX_CASES} case(s) past the ${MAX_CASES} kept`);
  for (const [id, entry] of entries.slice(-MAX_CASES)) {
    const shown = JSON.stringify(id.slice(0, 40));
    if (caseNameProblem(id)) {
      refused.push(`case ${shown}: not a case id`);
      continue;
    }
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      refused.push(`case ${shown}: not an object`);
      continue;
    }
    const e = entry as { runs?: unknown; started?: unknown };
    const latest: Partial<Record<CaseVariant, string>> = {};
    const given = e.runs && typeof e.runs === 'object' && !Array.isArray(e.runs) ? e.runs : {};
    for (const [variant, branch] of Object.entries(given)) {
      const v = variantOf(variant);
      if (v && typeof branch === 'string' && BRANCH_ID.test(branch)) latest[v] = branch;
      else
        refused.push(
          `case ${shown}: run ${JSON.stringify(variant.slice(0, 20))} is not a variant and a branch id`,
        );
    }
    const mine = new Map<string, CaseVariant>();
    const pairs = Array.isArray(e.started) ? (e.started as unknown[]) : [];
    for (const pair of pairs.slice(-MAX_RUNS)) {
      const v = Array.isArray(pair) ? variantOf(pair[1]) : null;
      if (Array.isArray(pair) && typeof pair[0] === 'string' && BRANCH_ID.test(pair[0]) && v)
        mine.set(pair[0], v);
      else refused.push(`case ${shown}: a started run is not [branch id, variant]`);
    }
    runs.set(id, latest);
    started.set(id, mine);
  }
  return refused.length
    ? {
        runs,
        started,
        refused:
          refused.slice(0, 3).join('; ') + (refused.length > 3 ? ` and ${refused.length - 3} more` : ''),
      }
    : { runs, started };
}

/** Leaves a run out of a case's memory (it turned out not to be the case's). */
export function forgetCaseRun(remembered: CaseRunsRemembered, id: string, branch: string): void {
  const runs = remembered.runs.get(id);
  if (runs)
    remembered.runs.set(
      id,
      Object.fromEntries(Object.entries(runs).filter(([, b]) => b !== branch)) as ActiveCase['runs'],
    );
  remembered.started.get(id)?.delete(branch);
}

/** Remembers the case runs (best effort: a full or disabled storage forgets them at the next reload). */
export function saveCaseRuns(
  remembered: CaseRunsRemembered,
  storage: Pick<Storage, 'setItem'> | null = safeStorage(),
): void {
  const ids = [...remembered.runs.keys()].slice(-MAX_CASES);
  const out = Object.fromEntries(
    ids.map((id) => [
      id,
      {
        runs: remembered.runs.get(id) ?? {},
        started: [...(remembered.started.get(id) ?? new Map<string, CaseVariant>())].slice(-MAX_RUNS),
      },
    ]),
  );
  try {
    storage?.setItem(KEY, JSON.stringify(out));
  } catch {
    // Quota or privacy mode: the runs are simply not remembered across a reload.
  }
}
