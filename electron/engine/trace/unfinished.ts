/**
 * What a kill can leave half-made in the store, found and repaired by the next stepbox
 * process (before orphaned traces are marked interrupted):
 * - `.creating-<episode>-<pid>/` — an episode being assembled (episode-store.ts) when its
 *   process died: nothing of it was ever visible; removed.
 * - `ep-…/` without `meta.json` (left by versions that made the folder in place): the meta
 *   is rebuilt from its main trace's header when that is whole; the folder is removed only
 *   when it holds nothing but empty folders (what such a kill left: nothing was recorded).
 *   Anything else in it (a trace cut or damaged, a FIFO, a link, a file someone put there) is
 *   not provably stepbox's leftover: it stays, and the library lists it as unreadable with
 *   why ({@link unlistedFolderProblem}).
 * - a `.jsonl` trace with no complete header line (empty or half-written by such a
 *   version): the branch recorded nothing; removed (the whole episode for a main branch).
 * - `*.tmp-<pid>-…` regular files of a durable write whose process died; removed.
 * Each repair writes one line to stderr naming what it did.
 */
import { existsSync, lstatSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { firstTraceLine, TraceCorruptError } from './trace-reader.js';
import { join } from 'node:path';
import { logger } from '../log.js';
import { currentProcessIdentity, pidExists, type ProcessIdentity } from '../process-identity.js';
import { tempFilePid, writeFileAtomic } from './durable-fs.js';
import { EPISODE_PREFIX } from './episode-ids.js';
import { EpisodeMeta, episodeMetaFor } from './episode-meta.js';
import type { HeaderFields } from './trace-store.js';

const log = logger('store');

/** The name prefix of an episode folder being assembled: `.creating-<episode>-<pid>`. */
export const CREATING_PREFIX = '.creating-';
const CREATING_NAME = /^\.creating-(.+)-(\d+)$/;

/** The store as the sweep sees it. */
export interface UnfinishedStore {
  readonly episodesDir: string;
  episodeDir(episode: string): string;
  removeEpisode(episode: string): void;
}

/** A process that is not this one and no longer exists. */
function deadPid(pid: number): boolean {
  return pid !== process.pid && !pidExists(pid);
}

/**
 * The first line of a plain trace when it is whole (ends in a newline), null when it was cut
 * off, undefined when the file is not one a kill could have cut (a link, a FIFO, a first line
 * too long for a header): left where it is, for the index to name as unreadable. Read up to
 * that line only: this runs over every open trace as each stepbox process starts.
 */
function wholeHeaderLine(path: string): string | null | undefined {
  try {
    return firstTraceLine(path);
  } catch (e) {
    if (e instanceof TraceCorruptError) return undefined;
    throw e;
  }
}

/** Removes `*.tmp-<pid>-…` files of dead processes in `dir` (regular files only: what a durable write makes). */
function sweepTempFiles(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = tempFilePid(name);
    if (pid !== null && deadPid(pid) && lstatSync(join(dir, name)).isFile())
      rmSync(join(dir, name), { force: true });
  }
}

/** What to do about an episode folder the store cannot list: the one fix the library and `list` say. */
export function unlistedFolderFix(dir: string): string {
  return `look at what is in ${dir}: put the episode back from its bundle (npx stepbox bundle import FILE --force), or remove the folder if it is not one (rm -r ${dir})`;
}

/**
 * The meta.json a folder without one gets back from its main trace's header, or why it cannot
 * (in words for a person, naming the file). Reads the header line only, never through a link
 * and never blocking on a FIFO (firstTraceLine).
 */
function metaFromTrace(dir: string, episode: string): { meta: EpisodeMeta } | { why: string; file: string } {
  const plain = join(dir, 'branches', `${episode}.jsonl`);
  // Each starts with the file it names (the library says it once, on its own line).
  const noMeta = 'its episode folder has no meta.json';
  let line: string | null;
  try {
    // lstat: a link or a FIFO in the trace's place is there, whatever it points at.
    lstatSync(plain);
    line = firstTraceLine(plain);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      const gz = `${plain}.gz`;
      return existsSync(gz)
        ? { why: `${gz}: ${noMeta} (a closed trace is not read to rebuild one)`, file: gz }
        : { why: `${dir}: no meta.json, and no trace to rebuild it from (${plain} is missing)`, file: dir };
    }
    if (e instanceof TraceCorruptError) return { why: `${e.message}, and ${noMeta}`, file: plain };
    throw e;
  }
  const notHeader = { why: `${plain}: line 1 is not this episode's header, and ${noMeta}`, file: plain };
  if (line === null) return { why: `${plain}: its header is cut off, and ${noMeta}`, file: plain };
  let header: HeaderFields & { type?: unknown; episode?: unknown; writer?: ProcessIdentity };
  try {
    header = JSON.parse(line) as typeof header;
  } catch {
    return notHeader;
  }
  if (header === null || typeof header !== 'object' || header.type !== 'header' || header.episode !== episode)
    return notHeader;
  const meta = EpisodeMeta.safeParse(
    episodeMetaFor(episode, header, header.writer ?? currentProcessIdentity()),
  );
  return meta.success ? { meta: meta.data } : notHeader;
}

/**
 * Why an episode folder without meta.json is not listed, for the library (null when its meta
 * can be rebuilt from its trace: the next startup sweep does).
 */
export function unlistedFolderProblem(dir: string, episode: string): { why: string; file: string } | null {
  const found = metaFromTrace(dir, episode);
  return 'meta' in found ? null : found;
}

/** The most entries {@link onlyEmptyFolders} looks through: a kill leaves two empty folders. */
const MAX_EMPTY_CHECK = 64;

/**
 * Whether `dir` holds nothing but (nested) empty folders, never followed through a link: all a
 * kill between making an episode's folder and writing its meta.json left (older versions), so
 * removing it loses nothing. Anything else (a file, a FIFO, a link, many entries) is no proof.
 */
function onlyEmptyFolders(dir: string, budget = { left: MAX_EMPTY_CHECK }): boolean {
  for (const name of readdirSync(dir)) {
    if (--budget.left < 0) return false;
    const path = join(dir, name);
    if (!lstatSync(path).isDirectory() || !onlyEmptyFolders(path, budget)) return false;
  }
  return true;
}

/**
 * Gives a folder without meta.json its meta back, or removes it when provably an empty leftover;
 * else leaves it as it is (the library names it). Returns what it did.
 */
function repairMetaLess(
  store: UnfinishedStore,
  dir: string,
  episode: string,
): 'recovered' | 'removed' | 'left' {
  const found = metaFromTrace(dir, episode);
  if ('meta' in found) {
    writeFileAtomic(join(dir, 'meta.json'), JSON.stringify(found.meta, null, 2) + '\n');
    log.warn(`recovered episode ${episode}: its meta.json was lost to a kill; rebuilt from its trace header`);
    return 'recovered';
  }
  if (onlyEmptyFolders(dir)) {
    store.removeEpisode(episode);
    log.warn(
      `removed episode ${episode}: a kill left its folder without meta.json or a trace (nothing was recorded)`,
    );
    return 'removed';
  }
  log.warn(`left episode folder ${episode} as it is: ${found.why}; the library lists it as unreadable`);
  return 'left';
}

/** Removes unclosed traces that never got a whole header; returns how many (the main branch's takes its episode). */
function sweepHeaderless(store: UnfinishedStore, episode: string): number {
  const dir = join(store.episodeDir(episode), 'branches');
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const name of readdirSync(dir)) {
    const m = /^([A-Za-z0-9_-]+)\.jsonl$/.exec(name);
    if (!m || wholeHeaderLine(join(dir, name)) !== null) continue; // whole, or not a cut trace
    // Versions before the linked header could be killed between creating the file and writing it.
    const bytes = statSync(join(dir, name)).size;
    if (m[1] === episode) {
      store.removeEpisode(episode);
      log.warn(
        `removed episode ${episode}: its trace was cut off before its header (${bytes} bytes; nothing was recorded)`,
      );
      return n + 1;
    }
    unlinkSync(join(dir, name));
    n += 1;
    log.warn(
      `removed branch ${m[1]} of ${episode}: its trace was cut off before its header (${bytes} bytes; nothing was recorded)`,
    );
  }
  return n;
}

/**
 * Completes, recovers or removes what killed processes left half-made in the store (see
 * the file comment). Never touches what a live process is making. Returns how many
 * things it repaired.
 */
export function sweepUnfinishedIn(store: UnfinishedStore): number {
  let repaired = 0;
  for (const entry of readdirSync(store.episodesDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(store.episodesDir, entry.name);
    const creating = CREATING_NAME.exec(entry.name);
    if (creating) {
      if (!deadPid(Number(creating[2]))) continue;
      rmSync(path, { recursive: true, force: true });
      log.warn(
        `removed the unfinished episode ${creating[1]}: its process (pid ${creating[2]}) was killed while creating it, before anything was recorded`,
      );
      repaired += 1;
      continue;
    }
    if (!entry.name.startsWith(EPISODE_PREFIX)) continue;
    const episode = entry.name;
    try {
      sweepTempFiles(path);
      sweepTempFiles(join(path, 'branches'));
      if (!existsSync(join(path, 'meta.json'))) {
        const did = repairMetaLess(store, path, episode);
        // Left: nothing of it is touched (its traces are not swept as cut either).
        if (did === 'left') continue;
        repaired += 1;
        if (did === 'removed') continue;
      }
      repaired += sweepHeaderless(store, episode);
    } catch (e) {
      log.warn(`episode ${episode}: cannot check for an unfinished creation (${(e as Error).message})`);
    }
  }
  return repaired;
}
