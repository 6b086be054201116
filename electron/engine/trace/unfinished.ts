/**
 * What a kill can leave half-made in the store, found and repaired by the next stepbox
 * process (before orphaned traces are marked interrupted):
 * - `.creating-<episode>-<pid>/` — an episode being assembled (episode-store.ts) when its
 *   process died: nothing of it was ever visible; removed.
 * - `ep-…/` without `meta.json` (left by versions that made the folder in place): the meta
 *   is rebuilt from its main trace's header when that is whole, else the folder is removed
 *   (nothing was recorded in it).
 * - a `.jsonl` trace with no complete header line (empty or half-written by such a
 *   version): the branch recorded nothing; removed (the whole episode for a main branch).
 * - `*.tmp-<pid>-…` files of a durable write whose process died; removed.
 * Each repair writes one line to stderr naming what it did.
 */
import { existsSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
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

/** Removes `*.tmp-<pid>-…` files of dead processes in `dir`. */
function sweepTempFiles(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const pid = tempFilePid(name);
    if (pid !== null && deadPid(pid)) rmSync(join(dir, name), { force: true });
  }
}

/** Rebuilds a lost meta.json from the main trace's header; false when there is no whole header. */
function recoverMeta(dir: string, episode: string): boolean {
  const branches = join(dir, 'branches');
  const plain = join(branches, `${episode}.jsonl`);
  if (!existsSync(plain)) return false;
  const line = wholeHeaderLine(plain);
  if (line === null || line === undefined) return false;
  let header: HeaderFields & { type?: unknown; episode?: unknown; writer?: ProcessIdentity };
  try {
    header = JSON.parse(line) as typeof header;
  } catch {
    return false;
  }
  if (header.type !== 'header' || header.episode !== episode) return false;
  const meta = EpisodeMeta.safeParse(
    episodeMetaFor(episode, header, header.writer ?? currentProcessIdentity()),
  );
  if (!meta.success) return false;
  writeFileAtomic(join(dir, 'meta.json'), JSON.stringify(meta.data, null, 2) + '\n');
  return true;
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
        if (recoverMeta(path, episode)) {
          log.warn(
            `recovered episode ${episode}: its meta.json was lost to a kill; rebuilt from its trace header`,
          );
        } else {
          store.removeEpisode(episode);
          log.warn(
            `removed episode ${episode}: a kill left its folder without meta.json or a trace (nothing was recorded)`,
          );
          repaired += 1;
          continue;
        }
        repaired += 1;
      }
      repaired += sweepHeaderless(store, episode);
    } catch (e) {
      log.warn(`episode ${episode}: cannot check for an unfinished creation (${(e as Error).message})`);
    }
  }
  return repaired;
}
