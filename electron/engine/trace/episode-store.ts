/**
 * The episode store: one folder per episode under `$STEPBOX_HOME` (default `~/.stepbox`).
 *
 * ```
 * $STEPBOX_HOME/
 *   index.sqlite                       the SQLite index (WAL), rebuildable: `stepbox reindex`
 *   episodes/<episode>/
 *     meta.json                        task name, created, agent spec, image, writer identity, branches
 *     branches/<branch>.jsonl          an open branch's trace (append-only JSONL)
 *     branches/<branch>.jsonl.gz       a closed branch's trace
 *     snapshots/                       the episode's DiskSnapshotStore (blobs + manifests)
 * ```
 * Ids: episodes `ep-YYYYMMDD-HHMMSS-xxxx`, fork branches `b-YYYYMMDD-HHMMSS-xxxx`; the main
 * branch's id equals its episode's. Anything taking an EPISODE accepts any branch id, or a
 * unique prefix of either.
 *
 * Entry points for the harness:
 * ```ts
 * const store = openEpisodeStore();            // $STEPBOX_HOME; also marks orphans interrupted
 * const { episode, branch, writer } = store.createEpisode({ task, task_path, agent, image, created: Date.now(),
 *                                                          parent_branch: null, fork_step: null });
 * writer.append({ type: 'snapshot', step: 0, source: 'harness', ... });
 * const fsyncMs = await writer.commit();       // once per step, after its snapshot (fsync off the event loop)
 * await writer.close({ step, status, end_reason, verifier }); // end + fsync + gzip + index
 * const fork = store.createBranch(episode, branch, 3, header); // its own id and trace
 * const snaps = store.snapshots(episode);        // the episode's SnapshotStore
 * const index = openIndex(store.home);           // list/search/flags (see episode-index.ts)
 * ```
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { readOpened } from '../read-opened.js';
import { join, resolve as resolvePath } from 'node:path';
import type { AppErrorCode } from '../../../shared/errors.js';
import { CURRENT_TRACE_SCHEMA, type HeaderEvent } from '../../../shared/trace-events.js';
import { logger } from '../log.js';
import { DiskSnapshotStore } from '../sandbox/disk-snapshot-store.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import { crashPoint } from '../crash-point.js';
import { EpisodeMeta, episodeMetaFor } from './episode-meta.js';
import { fsyncDir, writeFileAtomic } from './durable-fs.js';
import { BRANCH_PREFIX, EPISODE_PREFIX, isSafeId, newId } from './episode-ids.js';
import { indexClosedBranch } from './episode-index.js';
import { markInterruptedIn } from './interrupted.js';
import {
  CREATING_PREFIX,
  sweepUnfinishedIn,
  unlistedFolderFix,
  unlistedFolderProblem,
} from './unfinished.js';
import { currentProcessIdentity } from '../process-identity.js';
import type { StoredBranch, StoredBranches, UnlistedFolder } from './stored-branches.js';
import { readTraceFile, TraceCorruptError, type ParsedTrace } from './trace-reader.js';
import { UnsupportedSchemaError } from './trace-upgrade.js';
import type { BranchInfo, EpisodeStore, HeaderFields } from './trace-store.js';
import { FileTraceWriter, gzPathOf } from './trace-writer.js';
import { describeIssues } from '../../../shared/validation-issues.js';

const log = logger('store');

export type { HeaderFields };

/** A store operation that failed: `not_found`, `conflict` (ambiguous prefix, exists), `invalid_input`. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: AppErrorCode,
    message: string,
    /** The command or step that fixes it, when the code's default would not. */
    readonly fix: string | null = null,
  ) {
    super(message);
  }
}

export { EpisodeMeta } from './episode-meta.js';

export type { StoredBranch } from './stored-branches.js';

/** Options of {@link openEpisodeStore}. */
export interface StoreOptions {
  /** Builds an episode's snapshot store from its `snapshots/` folder; default DiskSnapshotStore. */
  readonly snapshotStore?: (dir: string) => SnapshotStore;
  /** Skip the orphan sweep (tools that only read, and tests of the sweep itself). Default false. */
  readonly skipMarkInterrupted?: boolean;
  /** Called with every branch trace the store closes or marks interrupted (the index hook). */
  readonly onBranchClosed?: (store: DiskEpisodeStore, branch: StoredBranch) => void;
}

import { stepboxHome } from '../stepbox-home.js';

export { stepboxHome };

/** The file-backed {@link EpisodeStore}. */
export class DiskEpisodeStore implements EpisodeStore, StoredBranches {
  readonly episodesDir: string;
  /**
   * The episode each branch id was last listed in (see {@link resolve}): a branch's id never
   * moves to another episode, so resolving it reads that one episode, not every episode's
   * meta.json and branches folder, newest first, until it is met (20 ms for a fork of the
   * oldest of 300 episodes, on every call that named it). Checked at each use: a branch gone
   * from there is looked for everywhere again.
   */
  private readonly branchHome = new Map<string, string>();

  constructor(
    readonly home: string,
    private readonly options: StoreOptions = {},
  ) {
    this.episodesDir = join(home, 'episodes');
    mkdirSync(this.episodesDir, { recursive: true });
  }

  /** The folder of an episode. */
  episodeDir(episode: string): string {
    return join(this.episodesDir, episode);
  }

  /** A fresh episode id no episode here has (the batch runner records it before the episode exists). */
  newEpisodeId(): string {
    let episode = newId(EPISODE_PREFIX);
    while (existsSync(this.episodeDir(episode))) episode = newId(EPISODE_PREFIX);
    return episode;
  }

  /**
   * Creates an episode (with id `id` when given, else a fresh one) and its main branch's
   * writer. The folder is assembled under `.creating-<id>-<pid>` — meta.json, then the
   * trace with its header — and renamed into place whole, so a kill at any moment leaves
   * either a complete episode or a leftover the next process sweeps
   * ({@link sweepUnfinishedIn}), never an episode folder without its meta or header.
   */
  createEpisode(
    header: HeaderFields,
    id?: string,
  ): { episode: string; branch: string; writer: FileTraceWriter } {
    const episode = id ?? this.newEpisodeId();
    if (!isSafeId(episode) || !episode.startsWith(EPISODE_PREFIX))
      throw new StoreError('invalid_input', `"${episode}" is not an episode id (${EPISODE_PREFIX}…)`);
    const dir = this.episodeDir(episode);
    if (existsSync(dir)) throw new StoreError('conflict', `episode ${episode} already exists`);
    const staging = join(this.episodesDir, `${CREATING_PREFIX}${episode}-${process.pid}`);
    try {
      return this.assembleEpisode(episode, staging, header);
    } catch (e) {
      rmSync(staging, { recursive: true, force: true });
      throw e;
    }
  }

  /** Builds the episode in `staging` and renames it into place (see {@link createEpisode}). */
  private assembleEpisode(
    episode: string,
    staging: string,
    header: HeaderFields,
  ): { episode: string; branch: string; writer: FileTraceWriter } {
    const dir = this.episodeDir(episode);
    mkdirSync(join(staging, 'branches'), { recursive: true });
    mkdirSync(join(staging, 'snapshots'), { recursive: true });
    crashPoint('episode-folder');
    const meta = episodeMetaFor(episode, header, currentProcessIdentity());
    writeFileAtomic(join(staging, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    crashPoint('episode-meta');
    const staged = join(staging, 'branches', `${episode}.jsonl`);
    const first = this.openWriter(
      episode,
      episode,
      { ...header, parent_branch: null, fork_step: null },
      staged,
    );
    // The header is in; the writer continues on the same file at its final path.
    const nextSeq = first.seq;
    first.abandon();
    // rename(2) onto an existing empty folder would succeed: the check above and the
    // random id make that a non-issue, and a non-empty one fails with ENOTEMPTY.
    renameSync(staging, dir);
    fsyncDir(this.episodesDir);
    const writer = FileTraceWriter.reopen(join(dir, 'branches', `${episode}.jsonl`), nextSeq, {
      onClosed: () => this.branchClosed(episode, episode),
    });
    return { episode, branch: episode, writer };
  }

  createBranch(
    episode: string,
    parentBranch: string,
    forkStep: number,
    header: HeaderFields,
  ): { branch: string; writer: FileTraceWriter } {
    const meta = this.meta(episode);
    if (!this.listBranches(episode).some((b) => b.branch === parentBranch))
      throw new StoreError('not_found', `episode ${episode} has no branch ${parentBranch}`);
    let branch = newId(BRANCH_PREFIX);
    while (meta.branches[branch]) branch = newId(BRANCH_PREFIX);
    // Re-read right before writing so a concurrent fork's entry is kept.
    const fresh = this.meta(episode);
    fresh.branches[branch] = { parent: parentBranch, fork_step: forkStep, created: header.created };
    writeFileAtomic(join(this.episodeDir(episode), 'meta.json'), JSON.stringify(fresh, null, 2) + '\n');
    const writer = this.openWriter(episode, branch, {
      ...header,
      parent_branch: parentBranch,
      fork_step: forkStep,
    });
    return { branch, writer };
  }

  private openWriter(
    episode: string,
    branch: string,
    header: HeaderFields,
    path = join(this.episodeDir(episode), 'branches', `${branch}.jsonl`),
  ): FileTraceWriter {
    return FileTraceWriter.create(
      path,
      // `writer` travels in the header so liveness is known per branch, even after a bundle import.
      { ...header, schema: CURRENT_TRACE_SCHEMA, episode, branch, writer: currentProcessIdentity() },
      { onClosed: () => this.branchClosed(episode, branch) },
    );
  }

  /** Tells the index hook a branch closed; an index failure never fails the episode. */
  branchClosed(episode: string, branch: string): void {
    const hook = this.options.onBranchClosed;
    if (!hook) return;
    try {
      hook(this, this.branchInfo(episode, branch));
    } catch (e) {
      log.warn(`indexing ${branch} failed (${(e as Error).message}); \`stepbox reindex\` repairs the index`);
    }
  }

  imported(episode: string): boolean {
    return this.meta(episode).imported !== undefined;
  }

  /** An episode's metadata; throws `not_found`. */
  meta(episode: string): EpisodeMeta {
    const path = join(this.episodeDir(episode), 'meta.json');
    if (!isSafeId(episode) || !existsSync(path)) throw new StoreError('not_found', `no episode ${episode}`);
    let json: unknown;
    try {
      json = JSON.parse(readMetaText(path));
    } catch (e) {
      throw new StoreError('trace_corrupt', `${path} is damaged: ${(e as Error).message}`);
    }
    const parsed = EpisodeMeta.safeParse(json);
    if (!parsed.success)
      throw new StoreError(
        'trace_corrupt',
        `${path} is damaged: ${describeIssues(parsed.error.issues, '(root)')}`,
      );
    return parsed.data;
  }

  /** True when episode `episode` exists (its folder with its meta.json). */
  hasEpisode(episode: string): boolean {
    return isSafeId(episode) && existsSync(join(this.episodeDir(episode), 'meta.json'));
  }

  /** Every episode id, newest first (ids sort by creation time). */
  listEpisodes(): string[] {
    return readdirSync(this.episodesDir, { withFileTypes: true })
      .filter(
        (d) =>
          d.isDirectory() &&
          d.name.startsWith(EPISODE_PREFIX) &&
          existsSync(join(this.episodesDir, d.name, 'meta.json')),
      )
      .map((d) => d.name)
      .sort()
      .reverse();
  }

  /**
   * The `ep-…` folders {@link listEpisodes} leaves out or cannot read the meta of: no meta.json
   * (the startup sweep left it, nothing proving it stepbox's own leftover) or a damaged one,
   * each with why and the fix. Read-only: what the library names instead of dropping it.
   */
  unlistedFolders(): UnlistedFolder[] {
    const out: UnlistedFolder[] = [];
    for (const d of readdirSync(this.episodesDir, { withFileTypes: true })) {
      if (!d.isDirectory()) continue;
      const folder = this.unlistedFolder(d.name);
      if (folder) out.push(folder);
    }
    return out.sort((a, b) => (a.episode < b.episode ? 1 : -1));
  }

  /** The episode folder `name` when it is one the store cannot list ({@link unlistedFolders}), else null. */
  private unlistedFolder(name: string): UnlistedFolder | null {
    if (!name.startsWith(EPISODE_PREFIX) || !isSafeId(name)) return null;
    const dir = this.episodeDir(name);
    if (!lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return null;
    const metaPath = join(dir, 'meta.json');
    let problem: { why: string; file: string } | null;
    if (existsSync(metaPath)) {
      try {
        this.meta(name);
        problem = null;
      } catch (e) {
        problem = { why: (e as Error).message, file: metaPath };
      }
    } else problem = unlistedFolderProblem(dir, name);
    return problem
      ? { episode: name, dir, file: problem.file, message: problem.why, fix: unlistedFolderFix(dir) }
      : null;
  }

  /** One branch's info; throws `not_found`. */
  branchInfo(episode: string, branch: string): StoredBranch {
    const found = this.listBranches(episode).find((b) => b.branch === branch);
    if (!found) throw new StoreError('not_found', `episode ${episode} has no branch ${branch}`);
    return found;
  }

  /**
   * {@link listBranches} for sweeps over every episode: one damaged episode folder (bad
   * meta.json, unreadable header) is skipped with a warning instead of failing them all.
   */
  branchesOrNone(episode: string): StoredBranch[] {
    try {
      return this.listBranches(episode);
    } catch (e) {
      log.warn(`episode ${episode} skipped: ${(e as Error).message}`);
      return [];
    }
  }

  /** The branches of an episode that have a trace file, main branch first. */
  listBranches(episode: string): StoredBranch[] {
    const meta = this.meta(episode);
    const dir = join(this.episodeDir(episode), 'branches');
    const ids = new Set<string>();
    for (const name of existsSync(dir) ? readdirSync(dir) : []) {
      const m = /^([A-Za-z0-9_-]+)\.jsonl(\.gz)?$/.exec(name);
      if (m) ids.add(m[1]);
    }
    for (const branch of ids) this.branchHome.set(branch, episode);
    return [...ids]
      .sort((a, b) => (a === episode ? -1 : b === episode ? 1 : a < b ? -1 : 1))
      .map((branch) => {
        const plain = join(dir, `${branch}.jsonl`);
        const gz = gzPathOf(plain);
        const closed = existsSync(gz);
        const known = meta.branches[branch];
        // A branch missing from meta.json (a lost concurrent update) still has its header; one
        // whose trace cannot be read is listed all the same (as a main branch): reading it says
        // why, where its episode's other branches would have gone with it.
        const header = known ? null : headerOrNull(closed ? gz : plain);
        return {
          episode,
          branch,
          parentBranch: known ? known.parent : (header?.parent_branch ?? null),
          forkStep: known ? known.fork_step : (header?.fork_step ?? null),
          tracePath: closed ? gz : plain,
          closed,
        };
      });
  }

  /**
   * Resolves an episode id, a branch id, or a unique prefix of one, to a branch (an
   * episode id means its main branch). Throws `not_found` or `conflict` (ambiguous).
   */
  resolve(id: string): StoredBranch {
    if (!isSafeId(id)) throw new StoreError('invalid_input', `"${id}" is not an episode or branch id`);
    // An episode id is its folder (listEpisodes' test for one, without listing them all).
    const folder = id.startsWith(EPISODE_PREFIX) && lstatSync(this.episodeDir(id), { throwIfNoEntry: false });
    if (folder && folder.isDirectory() && this.hasEpisode(id)) return this.branchInfo(id, id);
    const home = this.branchHome.get(id);
    if (home !== undefined && this.hasEpisode(home)) {
      const known = this.branchesOrNone(home).find((b) => b.branch === id);
      if (known) return known;
    }
    const episodes = this.listEpisodes();
    const matches = new Map<string, StoredBranch>();
    for (const ep of episodes) {
      const epMatches = ep.startsWith(id);
      for (const b of this.branchesOrNone(ep)) {
        if (b.branch === id) return b;
        if (b.branch.startsWith(id) && !(epMatches && b.branch !== ep)) matches.set(b.branch, b);
      }
    }
    if (matches.size === 1) return [...matches.values()][0];
    // An episode folder the store cannot list says why (`show` of a listed unreadable entry).
    const stray = matches.size === 0 ? this.unlistedFolder(id) : null;
    if (stray) throw new StoreError('trace_corrupt', stray.message, stray.fix);
    if (matches.size === 0)
      throw new StoreError('not_found', `no episode or branch matches "${id}"; \`stepbox list\` shows them`);
    throw new StoreError(
      'conflict',
      `"${id}" matches ${matches.size} episodes/branches (${[...matches.keys()].slice(0, 5).join(', ')}${
        matches.size > 5 ? ', …' : ''
      }); give more characters`,
    );
  }

  /** A branch's trace, refused when its header names another branch than its place in the store. */
  readTrace(branch: BranchInfo): ParsedTrace {
    return readTraceFile(this.currentTracePath(branch), { expect: branch });
  }

  /** The branch's trace path now (it moves from `.jsonl` to `.jsonl.gz` when closed). */
  currentTracePath(branch: BranchInfo): string {
    const plain = branch.tracePath.replace(/\.gz$/, '');
    return existsSync(gzPathOf(plain)) ? gzPathOf(plain) : plain;
  }

  snapshots(episode: string): SnapshotStore {
    return this.snapshotStoreAt(join(this.episodeDir(episode), 'snapshots'));
  }

  /** The snapshot store kept in `dir` (an episode's `snapshots/`, or a bundle import's staging copy). */
  snapshotStoreAt(dir: string): SnapshotStore {
    return this.options.snapshotStore ? this.options.snapshotStore(dir) : new DiskSnapshotStore(dir);
  }

  /** Repairs what killed processes left half-made ({@link sweepUnfinishedIn}), then closes orphaned traces. */
  markInterrupted(): number {
    sweepUnfinishedIn(this);
    return markInterruptedIn(this);
  }

  /** Removes an episode folder (gc); the rename first makes the removal look atomic to readers. */
  removeEpisode(episode: string): void {
    const dir = this.episodeDir(episode);
    if (!isSafeId(episode) || !existsSync(dir)) throw new StoreError('not_found', `no episode ${episode}`);
    const doomed = join(this.episodesDir, `.deleting-${episode}-${process.pid}`);
    renameSync(dir, doomed);
    rmSync(doomed, { recursive: true, force: true });
  }

  /** Bytes under a path (files only; a symlink is counted as itself, never followed), for gc's report. */
  static sizeOf(path: string): number {
    const st = lstatSync(path);
    if (!st.isDirectory()) return st.size;
    return readdirSync(path).reduce((n, name) => n + DiskEpisodeStore.sizeOf(join(path, name)), 0);
  }
}

/** The largest meta.json read (one entry per branch: thousands of forks fit many times over). */
const MAX_META_BYTES = 16 * 1024 ** 2;

/**
 * A meta.json's text, never through a link and never blocking on a FIFO (every listing reads
 * every episode's): anything but a regular file of a sane size is refused, saying what it is.
 */
function readMetaText(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new Error('it is a symbolic link, not a file');
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('it is not a regular file (a FIFO, a socket or a device)');
    if (st.size > MAX_META_BYTES) throw new Error(`it is ${st.size} bytes, more than a meta.json can be`);
    return readOpened(fd, st.size).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** The header of a trace, or null when the trace cannot be read (its reader says why). */
function headerOrNull(path: string): HeaderEvent | null {
  try {
    return readTraceFile(path).header;
  } catch (e) {
    if (e instanceof TraceCorruptError || e instanceof UnsupportedSchemaError) return null;
    throw e;
  }
}

const swept = new Set<string>();

/**
 * Opens the store at `home` (default `$STEPBOX_HOME` or `~/.stepbox`). The first open
 * in a process closes every orphaned trace as `interrupted` (Contracts: the next
 * stepbox process that finds such a trace appends its end event), and every branch the
 * store closes is indexed.
 */
export function openEpisodeStore(home: string = stepboxHome(), options: StoreOptions = {}): DiskEpisodeStore {
  const store = new DiskEpisodeStore(resolvePath(home), {
    onBranchClosed: (s, b) => indexClosedBranch(s, b),
    ...options,
  });
  if (!options.skipMarkInterrupted && !swept.has(store.home)) {
    swept.add(store.home);
    store.markInterrupted();
  }
  return store;
}
