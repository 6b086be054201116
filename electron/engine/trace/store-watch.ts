import { existsSync, mkdirSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { logger } from '../log.js';
import { EPISODE_PREFIX } from './episode-ids.js';
import { SETTLE_MS } from './file-version.js';

const log = logger('store');

/** Options of {@link watchStore}. */
export interface StoreWatchOptions {
  /** Changes closer together than this are told once (a new episode writes several files). Default 250 ms. */
  readonly debounceMs?: number;
  /**
   * The longest wait between two tellings while changes keep coming (a trace rewritten
   * without pause): the wait doubles from `debounceMs` up to this. Default 2 s.
   */
  readonly maxDelayMs?: number;
  /** How many episodes' folders are watched, newest first (each costs the system a watch). Default 256. */
  readonly maxEpisodes?: number;
}

/** What changed on disk: the episodes whose traces or meta.json changed, and whether the store itself did. */
export interface StoreChange {
  /** Episodes whose folder's traces or meta.json were written, renamed or removed. */
  readonly episodes: readonly string[];
  /** An episode folder came or went, or the index was written (by this process or another). */
  readonly store: boolean;
}

/** A trace or an episode's meta.json: the names whose changes the library follows. */
const FOLLOWED = /^(meta\.json|[A-Za-z0-9_-]+\.jsonl(\.gz)?)$/;

/**
 * Calls `onChange` when the store at `home` changes on disk, whoever changed it: a new
 * episode folder (`episodes/`, e.g. a `stepbox run` in a shell), the index written
 * (`index.sqlite*`: a branch closed or was indexed), and a trace or meta.json of one of the
 * newest `maxEpisodes` episodes written in place (a person appending steps, a tool rewriting
 * it, damage). Bounded whatever the writer does: an event only adds its episode to a set; the
 * set is told at most once per wait, the wait doubling (to `maxDelayMs`) while events keep
 * coming; and the episodes are told once more {@link SETTLE_MS} after their last event, when
 * a write of the same size in the same clock tick can no longer hide (see file-version.ts).
 * Returns the stop.
 */
export function watchStore(
  home: string,
  onChange: (change: StoreChange) => void,
  options: StoreWatchOptions = {},
): () => void {
  const debounceMs = options.debounceMs ?? 250;
  const maxDelayMs = Math.max(debounceMs, options.maxDelayMs ?? 2_000);
  const maxEpisodes = options.maxEpisodes ?? 256;
  const episodesDir = join(home, 'episodes');
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let delay = debounceMs;
  let lastTold = -Infinity;
  let pending = new Set<string>();
  let pendingStore = false;
  // The settle telling: one timer, re-armed from the last event's time when it fires early.
  let settleTimer: NodeJS.Timeout | null = null;
  let settling = new Set<string>();
  let lastEpisodeEvent = 0;
  const folders = new Map<string, FSWatcher[]>();

  const tell = () => {
    timer = null;
    if (stopped) return;
    const change: StoreChange = { episodes: [...pending], store: pendingStore };
    pending = new Set();
    pendingStore = false;
    if (change.store) follow();
    lastTold = Date.now();
    onChange(change);
  };
  const schedule = () => {
    if (stopped || timer) return;
    // Told again within two waits of the last telling: changes keep coming, so wait longer.
    delay = Date.now() - lastTold < 2 * delay ? Math.min(delay * 2, maxDelayMs) : debounceMs;
    timer = setTimeout(tell, delay);
    timer.unref();
  };
  const settle = () => {
    settleTimer = null;
    if (stopped) return;
    const wait = lastEpisodeEvent + SETTLE_MS + debounceMs - Date.now();
    if (wait > 0) {
      settleTimer = setTimeout(settle, wait);
      settleTimer.unref();
      return;
    }
    for (const e of settling) pending.add(e);
    settling = new Set();
    schedule();
  };
  const episodeChanged = (episode: string) => {
    pending.add(episode);
    settling.add(episode);
    lastEpisodeEvent = Date.now();
    if (!settleTimer) {
      settleTimer = setTimeout(settle, SETTLE_MS + debounceMs);
      settleTimer.unref();
    }
    schedule();
  };
  const storeChanged = () => {
    pendingStore = true;
    schedule();
  };
  const watchFolder = (path: string, onEvent: (name: string | null) => void): FSWatcher | null => {
    try {
      const w = watch(path, { persistent: false }, (_event, name) =>
        onEvent(name === null ? null : String(name)),
      );
      w.on('error', (e) =>
        log.warn(`watching ${path} stopped: ${e instanceof Error ? e.message : String(e)}`),
      );
      return w;
    } catch (e) {
      // Gone meanwhile, or no watch left (the system's limit): the list still follows it on the
      // window's own actions and on each listing.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        log.warn(`cannot watch ${path}: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  };
  /** Watches the folders of the newest episodes, and only those (closes the rest's). */
  const follow = () => {
    let names: string[];
    try {
      names = readdirSync(episodesDir)
        .filter((n) => n.startsWith(EPISODE_PREFIX))
        .sort()
        .reverse()
        .slice(0, maxEpisodes);
    } catch {
      return;
    }
    const keep = new Set(names);
    for (const [episode, ws] of folders)
      if (!keep.has(episode)) {
        for (const w of ws) w.close();
        folders.delete(episode);
      }
    for (const episode of names) {
      if (folders.has(episode)) continue;
      const dir = join(episodesDir, episode);
      const onEvent = (name: string | null) => {
        if (name === null || FOLLOWED.test(name)) episodeChanged(episode);
      };
      const ws = [watchFolder(dir, onEvent), watchFolder(join(dir, 'branches'), onEvent)].filter(
        (w): w is FSWatcher => w !== null,
      );
      folders.set(episode, ws);
    }
  };

  const watchers: FSWatcher[] = [];
  try {
    // Created here when missing so a first episode written by another process is seen too.
    if (!existsSync(episodesDir)) mkdirSync(episodesDir, { recursive: true });
    watchers.push(watch(episodesDir, { persistent: false }, storeChanged));
    watchers.push(
      watch(home, { persistent: false }, (_event, name) => {
        if (name === null || String(name).startsWith('index.sqlite')) storeChanged();
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
  follow();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    if (settleTimer) clearTimeout(settleTimer);
    for (const w of watchers) w.close();
    for (const ws of folders.values()) for (const w of ws) w.close();
    folders.clear();
  };
}
