import { existsSync, mkdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { logger } from '../log.js';

const log = logger('store');

/** Options of {@link watchStore}. */
export interface StoreWatchOptions {
  /** Changes closer together than this are told once (a new episode writes several files). Default 250 ms. */
  readonly debounceMs?: number;
}

/**
 * Calls `onChange` when the store at `home` changes on disk, whoever changed it: a new
 * episode folder (`episodes/`, e.g. a `stepbox run` in a shell), or the index written
 * (`index.sqlite*`: a branch closed or was indexed). Traces growing step by step are not
 * watched (not recursive): the list changes when an episode appears or ends. Returns the stop.
 */
export function watchStore(home: string, onChange: () => void, options: StoreWatchOptions = {}): () => void {
  const debounceMs = options.debounceMs ?? 250;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const fire = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      if (!stopped) onChange();
    }, debounceMs);
    timer.unref();
  };
  const watchers: FSWatcher[] = [];
  const episodes = join(home, 'episodes');
  try {
    // Created here when missing so a first episode written by another process is seen too.
    if (!existsSync(episodes)) mkdirSync(episodes, { recursive: true });
    watchers.push(watch(episodes, { persistent: false }, fire));
    watchers.push(
      watch(home, { persistent: false }, (_event, name) => {
        if (name === null || String(name).startsWith('index.sqlite')) fire();
      }),
    );
  } catch (e) {
    // No watcher (a platform or file system without one): the list still refreshes on the
    // window's own actions and on a search; only others' episodes wait for one.
    log.warn(
      `cannot watch ${home} for episodes written elsewhere: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  for (const w of watchers)
    w.on('error', (e) => log.warn(`watching ${home} stopped: ${e instanceof Error ? e.message : String(e)}`));
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
