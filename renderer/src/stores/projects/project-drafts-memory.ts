import { safeStorage } from '../../model/safe-storage';

const KEY = 'stepbox.project-drafts.v1';
/** Projects remembered at most (the most recently edited kept): a page of JSON, no more. */
const MAX_PROJECTS = 50;
/** The longest Goal or Check kept: what `episode.start` takes. */
const MAX_TEXT = 20_000;

/** The Goal and Check typed on each bare folder's card, by the project's path. */
export interface ProjectDrafts {
  readonly goals: Readonly<Record<string, string>>;
  readonly checks: Readonly<Record<string, string>>;
}

/**
 * The Goal and Check typed on the projects' cards before a reload (localStorage): without them a
 * reload, or a second window, showed a bare folder typed for as "needs a goal" with empty boxes.
 * The storage is outside the app's control (edited by hand, another version), so it is parsed
 * here: an absolute path, a goal and a check as text of at most {@link MAX_TEXT} characters, at
 * most {@link MAX_PROJECTS} projects. A draft is a convenience the person sees in the box before a
 * Start: one that does not fit is left out, and the box is empty as before.
 */
export function loadProjectDrafts(storage: Pick<Storage, 'getItem'> | null = safeStorage()): ProjectDrafts {
  const goals: Record<string, string> = {};
  const checks: Record<string, string> = {};
  let saved: unknown;
  try {
    saved = JSON.parse(storage?.getItem(KEY) ?? '{}');
  } catch {
    return { goals, checks };
  }
  if (!saved || typeof saved !== 'object' || Array.isArray(saved)) return { goals, checks };
  const text = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT;
  for (const [path, entry] of Object.entries(saved as Record<string, unknown>).slice(-MAX_PROJECTS)) {
    if (!path.startsWith('/') || !entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const { goal, check } = entry as { goal?: unknown; check?: unknown };
    if (text(goal) && goal !== '') goals[path] = goal;
    if (text(check) && check !== '') checks[path] = check;
  }
  return { goals, checks };
}

/**
 * Remembers the drafts, the project last edited last (best effort: a full or disabled storage
 * forgets them at the next reload). `latest` is the path just edited, kept when the cap cuts.
 */
export function saveProjectDrafts(
  drafts: ProjectDrafts,
  latest: string | null,
  storage: Pick<Storage, 'setItem'> | null = safeStorage(),
): void {
  const paths = [...new Set([...Object.keys(drafts.goals), ...Object.keys(drafts.checks)])].filter(
    (p) => p !== latest && (drafts.goals[p] || drafts.checks[p]),
  );
  if (latest !== null && (drafts.goals[latest] || drafts.checks[latest])) paths.push(latest);
  const out = Object.fromEntries(
    paths
      .slice(-MAX_PROJECTS)
      .map((p) => [p, { goal: drafts.goals[p] ?? '', check: drafts.checks[p] ?? '' }]),
  );
  try {
    storage?.setItem(KEY, JSON.stringify(out));
  } catch {
    // Quota or privacy mode: the drafts are simply not remembered across a reload.
  }
}
