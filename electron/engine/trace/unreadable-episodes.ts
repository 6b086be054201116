import { UnsupportedSchemaError, unreadableSchemaMessage } from './trace-upgrade.js';
import type { StoredBranches } from './stored-branches.js';

/** An episode in the store this stepbox cannot read: its traces were written by another version. */
export interface UnreadableEpisode {
  readonly id: string;
  readonly schema: string;
  /** What to tell a person: made by a newer or an older stepbox, and what to do. */
  readonly message: string;
}

/**
 * The episodes of `store` that are not in the index because their trace's format is another
 * version's: `list` names them (a store full of them is not "No episodes yet"). Only
 * episodes missing from `indexed` are read, and only up to the first branch that answers.
 */
export function unreadableEpisodes(store: StoredBranches, indexed: ReadonlySet<string>): UnreadableEpisode[] {
  const out: UnreadableEpisode[] = [];
  for (const id of store.listEpisodes()) {
    if (indexed.has(id)) continue;
    try {
      for (const b of store.branchesOrNone(id)) {
        store.readTrace(b);
        break;
      }
    } catch (e) {
      if (e instanceof UnsupportedSchemaError)
        out.push({ id, schema: e.schema, message: unreadableSchemaMessage(e.schema) });
    }
  }
  return out;
}
