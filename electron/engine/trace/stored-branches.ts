import type { ParsedTrace } from './trace-reader.js';
import type { BranchInfo } from './trace-store.js';

/** A branch as the store lists it, with whether its trace is closed (compressed). */
export interface StoredBranch extends BranchInfo {
  readonly closed: boolean;
}

/**
 * The store as its sweeps see it (marking orphaned traces interrupted, indexing closed
 * branches): the episodes on disk and their branches. Its own interface so the sweeps
 * need not import the store that calls them.
 */
export interface StoredBranches {
  readonly home: string;
  listEpisodes(): string[];
  /** The branches of an episode, or none when its folder is unreadable. */
  branchesOrNone(episode: string): StoredBranch[];
  readTrace(branch: BranchInfo): ParsedTrace;
  /** Records that a branch's trace was closed (compressed), for the index hook. */
  branchClosed(episode: string, branch: string): void;
}
