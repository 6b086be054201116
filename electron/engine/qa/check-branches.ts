import { fileVersion, type FileVersion } from '../trace/file-version.js';
import { checkEpisode, type EpisodeCheck } from '../../../shared/qa/check-episode.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import type { EpisodeIndex, IndexedFlag } from '../trace/episode-index.js';
import type { BranchInfo } from '../trace/trace-store.js';
import { loadedBranch, type LoadedBranch } from './episode-set.js';
import { qaReference } from './qa-reference.js';
import { readLineage } from '../trace/lineage.js';
import { flagRulesId } from './flag-rules.js';

/** Every event of a branch in file order: the reader sets an incomplete last step apart; QA wants it back in place. */
export function branchEvents(b: LoadedBranch): TraceEvent[] {
  return [...b.trace.events, ...(b.trace.partial ?? [])].sort((x, y) => x.seq - y.seq);
}

/** A fork's ancestors' events up to its fork step (what its own trace continues). */
function inheritedEvents(source: DiskEpisodeStore, b: LoadedBranch): TraceEvent[] {
  const lineage = readLineage(source, source.resolve(b.branch));
  const own = lineage.events.length - b.trace.events.filter((e) => e.type !== 'header').length;
  return lineage.events.slice(0, Math.max(0, own));
}

/** A branch's QA verdict. */
export interface BranchCheck extends EpisodeCheck {
  readonly episode: string;
  readonly branch: string;
}

/** Runs QA over one loaded branch, with references from the index and the snapshot store. */
export async function checkBranch(
  b: LoadedBranch,
  store: DiskEpisodeStore | null,
  options: { useIndex?: boolean; open?: boolean } = {},
): Promise<BranchCheck> {
  const events = branchEvents(b);
  const source = b.store ?? store;
  const reference = b.task
    ? await qaReference({
        home: source?.home ?? null,
        task: b.task,
        branch: b.branch,
        events,
        snapshots: source ? source.snapshots(b.episode) : null,
        useIndex: options.useIndex,
      })
    : undefined;
  const inherited = source && b.forkStep !== null ? inheritedEvents(source, b) : undefined;
  const result = checkEpisode(
    { events, torn: b.trace.torn, open: options.open, ...(inherited ? { inherited } : {}) },
    reference,
  );
  return { episode: b.episode, branch: b.branch, ...result };
}

/** Writes branches' flags to the engine's index (what `stepbox search --flag` finds). */
export function recordFlags(index: Pick<EpisodeIndex, 'replaceFlags'>, checks: readonly BranchCheck[]): void {
  for (const c of checks)
    index.replaceFlags(
      c.branch,
      c.flags.map((f) => ({ rule: f.rule, step: f.step, severity: f.severity, message: f.message })),
    );
}

/**
 * A stored branch's QA flags as every view gives them (`show`, the window's list and open,
 * the shared file): the ones the index computed from this very trace version, else
 * {@link checkBranch} over its own trace with references, recorded for the next reader.
 */
export async function currentFlags(
  store: DiskEpisodeStore,
  index: EpisodeIndex,
  info: BranchInfo,
  /** The branch's trace when the caller has read it already. */
  read?: LoadedBranch['trace'],
  /**
   * The trace file's version `read` was read at (its stat taken before its content); without
   * it, flags computed from `read` are returned and not kept (their version is unknown).
   */
  readAt?: FileVersion | null,
): Promise<IndexedFlag[]> {
  const compute = async (trace: LoadedBranch['trace']) => {
    const { flags } = await checkBranch(loadedBranch(info, trace), store, { open: trace.end === null });
    return flags.map((f) => ({ rule: f.rule, step: f.step, severity: f.severity, message: f.message }));
  };
  if (read && !readAt) return compute(read);
  // The version the flags are kept under is the one the content was read at (or an earlier
  // stat): kept under the file's version at the end, flags of a trace read before its end was
  // written stood for the ended trace, and the end's own flags never showed.
  let at = readAt ?? null;
  if (!at) {
    at = fileVersion(store.currentTracePath(info));
  }
  const rules = flagRulesId();
  const known = at ? index.checkedFlags(info.branch, rules, at) : null;
  if (known) return known;
  const found = await compute(read ?? store.readTrace(info));
  index.replaceFlags(info.branch, found);
  if (at) index.markFlagsChecked(info.branch, rules, at);
  return found;
}
