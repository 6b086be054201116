import { UnsupportedSchemaError, unreadableSchemaMessage } from './trace-upgrade.js';
import type { StoredBranches } from './stored-branches.js';
import { DEFAULT_FIXES, engineError } from '../engine-error.js';

/**
 * An episode in the store this stepbox cannot read: its traces were written by another
 * version, or a line of one does not validate (`schema` null: the file says which line).
 */
export interface UnreadableEpisode {
  readonly id: string;
  readonly schema: string | null;
  /** What to tell a person: made by a newer or an older stepbox, or the file, line and what is wrong. */
  readonly message: string;
  /** The trace file that could not be read. */
  readonly file: string;
  /** What to do about it (a command), as `stepbox show` prints it. */
  readonly fix: string | null;
}

/**
 * The episodes of `store` that are not in the index because their trace cannot be read:
 * another version's format, or a line that fails validation (the index skips it with a
 * warning on stderr alone). `list` and the window's library name them: a store full of them
 * is not "No episodes yet", and one of them is not gone without a word. Only episodes missing
 * from `indexed` are read, and only up to the first branch that answers.
 */
export function unreadableEpisodes(store: StoredBranches, indexed: ReadonlySet<string>): UnreadableEpisode[] {
  const out: UnreadableEpisode[] = [];
  for (const id of store.listEpisodes()) {
    if (indexed.has(id)) continue;
    let file = '';
    try {
      for (const b of store.branchesOrNone(id)) {
        file = b.tracePath;
        store.readTrace(b);
        break;
      }
    } catch (e) {
      if (e instanceof UnsupportedSchemaError)
        out.push({ id, schema: e.schema, message: unreadableSchemaMessage(e.schema), file, fix: e.fix });
      else {
        // The reader's words name the file and the line (what `stepbox show` prints, exit 3).
        const known = engineError(e);
        if (known)
          out.push({
            id,
            schema: null,
            message: known.message,
            file,
            fix: known.fix ?? DEFAULT_FIXES[known.code] ?? null,
          });
      }
    }
  }
  return out;
}
