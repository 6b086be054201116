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
}

const variantOf = (v: unknown): CaseVariant | null => (v === 'broken' || v === 'fixed' ? v : null);

/**
 * The case runs this window started before a reload (localStorage): without them a click on a
 * case's card after a reload started a new broken run instead of reopening the one that ended.
 * Anything unreadable (edited by hand, another version) is left out, never an error.
 */
export function loadCaseRuns(storage: Pick<Storage, 'getItem'> | null = safeStorage()): CaseRunsRemembered {
  const runs = new Map<string, ActiveCase['runs']>();
  const started = new Map<string, Map<string, CaseVariant>>();
  try {
    const raw = storage?.getItem(KEY);
    const saved: unknown = raw ? JSON.parse(raw) : {};
    if (!saved || typeof saved !== 'object') return { runs, started };
    for (const [id, entry] of Object.entries(saved as Record<string, unknown>)) {
      if (!entry || typeof entry !== 'object') continue;
      const e = entry as { runs?: Record<string, unknown>; started?: unknown };
      const latest: Partial<Record<CaseVariant, string>> = {};
      for (const [variant, branch] of Object.entries(e.runs ?? {})) {
        const v = variantOf(variant);
        if (v && typeof branch === 'string') latest[v] = branch;
      }
      const mine = new Map<string, CaseVariant>();
      for (const pair of Array.isArray(e.started) ? (e.started as unknown[]) : []) {
        if (!Array.isArray(pair)) continue;
        const v = variantOf(pair[1]);
        if (typeof pair[0] === 'string' && v) mine.set(pair[0], v);
      }
      runs.set(id, latest);
      started.set(id, mine);
    }
  } catch {
    // Not JSON: nothing remembered, as on a first start.
  }
  return { runs, started };
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
