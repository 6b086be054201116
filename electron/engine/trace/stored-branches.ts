import type { ParsedTrace } from './trace-reader.js';
import type { BranchInfo } from './trace-store.js';

/** A branch as the store lists it, with whether its trace is closed (compressed). */
export interface StoredBranch extends BranchInfo {
  readonly closed: boolean;
}

/**
 * An episode folder the store does not list as an episode (no meta.json the startup sweep
 * could rebuild, or a damaged one), left in place because nothing proves it is stepbox's own
 * leftover: the library names it with why, never drops or deletes it.
 */
export interface UnlistedFolder {
  readonly episode: string;
  readonly dir: string;
  /** The file that says what is wrong (its meta.json, or its main trace). */
  readonly file: string;
  readonly message: string;
  readonly fix: string | null;
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
  /** Episode folders {@link listEpisodes} leaves out, with why (none when the store cannot tell). */
  unlistedFolders?(): UnlistedFolder[];
  /** Records that a branch's trace was closed (compressed), for the index hook. */
  branchClosed(episode: string, branch: string): void;
}
