import { checkEpisode, type EpisodeCheck } from '../../../shared/qa/check-episode.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import type { EpisodeIndex } from '../trace/episode-index.js';
import type { LoadedBranch } from './episode-set.js';
import { qaReference } from './qa-reference.js';

/** Every event of a branch in file order: the reader sets an incomplete last step apart; QA wants it back in place. */
export function branchEvents(b: LoadedBranch): TraceEvent[] {
  return [...b.trace.events, ...(b.trace.partial ?? [])].sort((x, y) => x.seq - y.seq);
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
  const result = checkEpisode({ events, torn: b.trace.torn, open: options.open }, reference);
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
