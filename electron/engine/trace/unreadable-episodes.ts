import { UnsupportedSchemaError, unreadableSchemaMessage } from './trace-upgrade.js';
import type { EpisodeIndex } from './episode-index.js';
import type { BranchInfo } from './trace-store.js';
import { DEFAULT_FIXES, engineError } from '../engine-error.js';

/**
 * A branch in the store this stepbox cannot read: its trace was written by another version,
 * a line of it does not validate (`schema` null: the message says which line), it is not a
 * regular file or too large to read, or the parent trace a fork inherits from cannot be read.
 */
export interface UnreadableEpisode {
  /** Its episode. */
  readonly id: string;
  /** The branch whose trace cannot be read (the episode's id for its main branch). */
  readonly branch: string;
  readonly schema: string | null;
  /** What to tell a person: made by a newer or an older stepbox, or the file, line and what is wrong. */
  readonly message: string;
  /** The trace file that could not be read (a fork's parent's, when that is what failed). */
  readonly file: string;
  /** What to do about it (a command), as `stepbox show` prints it. */
  readonly fix: string | null;
}

/**
 * The one wording of a branch that cannot be read, from what its reader threw: the reader's
 * own message (the file, the line, what is wrong: what `stepbox show` prints, exit 3) and the
 * fix the error carries, else the code's. Anything else (a bug) is named all the same, with its
 * message: a branch is never left out of the list without a word.
 */
export function unreadableTrace(
  e: unknown,
  b: Pick<BranchInfo, 'episode' | 'branch' | 'tracePath'>,
): UnreadableEpisode {
  const at = { id: b.episode, branch: b.branch };
  const file = (e as { file?: unknown } | null)?.file;
  const failed = typeof file === 'string' ? file : b.tracePath;
  if (e instanceof UnsupportedSchemaError)
    return { ...at, schema: e.schema, message: unreadableSchemaMessage(e.schema), file: failed, fix: e.fix };
  const known = engineError(e);
  if (known)
    return {
      ...at,
      schema: null,
      message: known.message,
      file: failed,
      fix: known.fix ?? DEFAULT_FIXES[known.code] ?? null,
    };
  return {
    ...at,
    schema: null,
    message: `${b.tracePath} cannot be read: ${e instanceof Error ? e.message : String(e)}`,
    file: failed,
    fix: null,
  };
}

/**
 * The branches of the store whose traces cannot be read, as the index's last refresh found
 * them: traces of another version, a line that fails validation (whether the branch was never
 * indexed, is a fork of an indexed episode, or was damaged after it was indexed), a file that
 * is not a trace. `list` and the window's library name them: a store full of them is not "No
 * episodes yet", and one of them is not gone without a word.
 */
export function unreadableEpisodes(index: EpisodeIndex): UnreadableEpisode[] {
  return index.unreadable();
}
