import { safeStorage } from '../../model/safe-storage';

const KEY = 'stepbox.inject-drafts.v1';
/** Branches remembered at most (the most recently typed for kept): a page of JSON, no more. */
const MAX_BRANCHES = 50;
/** The longest draft kept (a message `episode.inject` takes is far shorter). */
const MAX_TEXT = 20_000;
/** A branch id as the store makes them (`ep-…`, `b-…`): nothing to escape. */
const BRANCH_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** What a person types in the Inject panel for one branch (the inject store's drafts). */
export interface InjectDrafts {
  readonly section: 'decide' | 'message' | 'override' | null;
  readonly role: 'system' | 'user';
  readonly mode: 'text' | 'json';
  readonly text: string;
  readonly overrideText: string;
  readonly decideTool: string;
  readonly decideArgs: string;
  readonly decideText: string;
}

/**
 * The Inject drafts typed for each branch before a reload (localStorage, as the projects' Goal
 * and Check drafts are): a message half-typed for a held step was gone after a reload. Kept by
 * branch, so a draft comes back only on the branch it was typed for, never another episode's.
 * The storage is outside the app's control (edited by hand, another version), so it is parsed
 * here against `defaults`: a field of the wrong type or too long is the default, a key that is
 * not a branch id is left out. A draft is a convenience: one that does not fit is not restored.
 */
export function loadInjectDrafts(
  defaults: InjectDrafts,
  storage: Pick<Storage, 'getItem'> | null = safeStorage(),
): Map<string, InjectDrafts> {
  const kept = new Map<string, InjectDrafts>();
  let saved: unknown;
  try {
    saved = JSON.parse(storage?.getItem(KEY) ?? '{}');
  } catch {
    return kept;
  }
  if (!saved || typeof saved !== 'object' || Array.isArray(saved)) return kept;
  const text = (v: unknown, d: string) => (typeof v === 'string' && v.length <= MAX_TEXT ? v : d);
  const oneOf = <T extends string | null>(v: unknown, all: readonly T[], d: T): T =>
    all.includes(v as T) ? (v as T) : d;
  for (const [branch, entry] of Object.entries(saved as Record<string, unknown>).slice(-MAX_BRANCHES)) {
    if (!BRANCH_ID.test(branch) || !entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const e = entry as Record<string, unknown>;
    kept.set(branch, {
      section: oneOf(e.section, ['decide', 'message', 'override', null], defaults.section),
      role: oneOf(e.role, ['system', 'user'], defaults.role),
      mode: oneOf(e.mode, ['text', 'json'], defaults.mode),
      text: text(e.text, defaults.text),
      overrideText: text(e.overrideText, defaults.overrideText),
      decideTool: text(e.decideTool, defaults.decideTool),
      decideArgs: text(e.decideArgs, defaults.decideArgs),
      decideText: text(e.decideText, defaults.decideText),
    });
  }
  return kept;
}

/**
 * Remembers the drafts that differ from `defaults`, the branch `latest` last (kept when the cap
 * cuts). Best effort: a full or disabled storage forgets them at the next reload.
 */
export function saveInjectDrafts(
  kept: ReadonlyMap<string, InjectDrafts>,
  defaults: InjectDrafts,
  latest: string | null,
  storage: Pick<Storage, 'setItem'> | null = safeStorage(),
): void {
  const typed = (d: InjectDrafts) =>
    (Object.keys(defaults) as (keyof InjectDrafts)[]).some((k) => d[k] !== defaults[k]);
  const branches = [...kept.keys()].filter((b) => b !== latest && typed(kept.get(b)!));
  if (latest !== null && kept.has(latest) && typed(kept.get(latest)!)) branches.push(latest);
  const out = Object.fromEntries(branches.slice(-MAX_BRANCHES).map((b) => [b, kept.get(b)]));
  try {
    storage?.setItem(KEY, JSON.stringify(out));
  } catch {
    // Quota or privacy mode: the drafts are simply not remembered across a reload.
  }
}
