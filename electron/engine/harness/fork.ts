import { HarnessError } from './harness-error.js';
import { openBranchController, type EpisodeEnv } from './episode-factory.js';
import type { EpisodeRunner } from './episode-runner.js';
import { readLineage, lastSnapshot } from '../trace/lineage.js';

/** Options of {@link forkEpisode}. */
export interface ForkOptions extends EpisodeEnv {
  readonly id: string;
  /** The fork step K: steps 1..K are taken from the parent, the new agent decides K+1. */
  readonly at: number;
  /** The new branch's agent; default the parent's, past its first K decisions. */
  readonly agentSpec?: string;
  /** Extra header fields of the new branch (a candidate names its group and index). */
  readonly headerExtra?: Record<string, unknown>;
}

/**
 * Forks a branch at step K into a new branch with its own id and trace: snapshot K is
 * restored in a fresh sandbox (never re-executed); a `scripted:` file given here starts
 * at its first line.
 */
export async function forkEpisode(options: ForkOptions): Promise<EpisodeRunner> {
  const store = options.store;
  const lineage = readLineage(store, store.resolve(options.id));
  const last = lastSnapshot(lineage.events)?.step ?? 0;
  if (!Number.isInteger(options.at) || options.at < 0 || options.at > last) {
    throw new HarnessError('invalid_input', `--at ${options.at}: ${options.id} has steps 0..${last}`);
  }
  return openBranchController({ ...options, store, branchNow: true });
}
