import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseTask, type Task } from '../../../shared/task.js';
import { logger } from '../log.js';
import type { Engine } from '../open-engine.js';
import { StoreError, type DiskEpisodeStore } from '../trace/episode-store.js';
import { readTraceFile, TraceCorruptError, type ParsedTrace } from '../trace/trace-reader.js';
import type { BranchInfo, ReadTrace } from '../trace/trace-store.js';

const log = logger('qa');

/**
 * One branch to judge, report or export: where it is stored and its own trace file as read
 * (QA, reports and exports read the trace itself; the window's views add the lineage).
 */
export interface LoadedBranch extends BranchInfo {
  readonly trace: ReadTrace;
  /** The header's task with defaults, or null when it does not parse. */
  readonly task: Task | null;
  /** The batch slot it fills, when loaded from a batch folder. */
  readonly slot?: { readonly task: string; readonly index: number };
  /** The store holding it, when not the caller's (a batch recorded under another $STEPBOX_HOME). */
  readonly store?: DiskEpisodeStore;
}

/** The header's task, defaults filled; null if it does not parse. */
export function taskOf(trace: ReadTrace): Task | null {
  const parsed = parseTask(trace.header.task, 'the header task');
  return parsed.ok ? parsed.value : null;
}

/** A branch stored at `info` whose trace was read (the one way a {@link LoadedBranch} is made). */
export function loadedBranch(
  info: BranchInfo,
  trace: ReadTrace,
  slot?: LoadedBranch['slot'],
  store?: DiskEpisodeStore,
): LoadedBranch {
  return {
    episode: info.episode,
    branch: info.branch,
    parentBranch: info.parentBranch,
    forkStep: info.forkStep,
    tracePath: info.tracePath,
    trace,
    task: taskOf(trace),
    ...(slot ? { slot } : {}),
    ...(store ? { store } : {}),
  };
}

/** A branch from a trace file read by path: where it is stored is what its header says. */
function fromTrace(
  trace: ParsedTrace,
  path: string,
  slot?: LoadedBranch['slot'],
  store?: DiskEpisodeStore,
): LoadedBranch {
  const h = trace.header;
  const info = { episode: h.episode, branch: h.branch, parentBranch: h.parent_branch, forkStep: h.fork_step };
  return loadedBranch({ ...info, tracePath: path }, trace, slot, store);
}

/** The batch file's slots as this loader needs them (the batch module owns the full schema). */
interface BatchSlotRef {
  readonly task: string;
  readonly index: number;
  readonly episode: string | null;
}

/** The trace files under a folder (`*.jsonl`, `*.jsonl.gz` whose first line is a header), sorted. */
function traceFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...traceFilesUnder(path));
    else if (/\.jsonl(\.gz)?$/.test(entry.name) && !entry.name.endsWith('.meta.jsonl')) out.push(path);
  }
  return out.sort();
}

/** A stored branch by episode or branch id (or unique prefix); `allBranches` adds the episode's forks. */
export function loadStoredBranches(
  id: string,
  store: DiskEpisodeStore,
  options: { allBranches?: boolean } = {},
): LoadedBranch[] {
  const info = store.resolve(id);
  const branches = options.allBranches ? store.listBranches(info.episode) : [info];
  return branches.map((b) => {
    const path = store.currentTracePath(b);
    return loadedBranch({ ...b, tracePath: path }, store.readTrace(b));
  });
}

/**
 * Loads what an `EPISODE|DIR` argument names: a batch folder (its `batch.json` slots,
 * every branch of each slot's episode, read in the store the batch ran in, which the
 * engine opens), any other folder (every trace file under it), or an episode/branch id
 * in the engine's store (that branch). `allBranches` adds an id's or batch's forks.
 */
export function loadBranches(
  target: string,
  engine: Pick<Engine, 'store' | 'storeAt'>,
  options: { allBranches?: boolean } = {},
): LoadedBranch[] {
  if (!existsSync(target) || !statSync(target).isDirectory())
    return loadStoredBranches(target, engine.store, options);
  const batchFile = join(target, 'batch.json');
  if (existsSync(batchFile)) {
    let batch: { home?: string; slots?: BatchSlotRef[] };
    try {
      batch = JSON.parse(readFileSync(batchFile, 'utf8')) as typeof batch;
    } catch (e) {
      throw new StoreError('invalid_input', `${batchFile} is not a batch file (${(e as Error).message})`);
    }
    if (
      typeof batch !== 'object' ||
      batch === null ||
      (batch.slots !== undefined && !Array.isArray(batch.slots))
    )
      throw new StoreError('invalid_input', `${batchFile} is not a batch file (no slots list)`);
    // A batch remembers the store it ran in; read it there when that is not the caller's.
    const from = batch.home && existsSync(batch.home) ? engine.storeAt(batch.home) : engine.store;
    const own = from === engine.store ? undefined : from;
    const out: LoadedBranch[] = [];
    for (const slot of batch.slots ?? []) {
      if (!slot.episode) continue;
      const branches = options.allBranches
        ? from.listBranches(slot.episode)
        : [from.branchInfo(slot.episode, slot.episode)];
      for (const b of branches) {
        const path = from.currentTracePath(b);
        out.push(
          loadedBranch(
            { ...b, tracePath: path },
            from.readTrace(b),
            { task: slot.task, index: slot.index },
            own,
          ),
        );
      }
    }
    return out;
  }
  const out: LoadedBranch[] = [];
  for (const path of traceFilesUnder(target)) {
    try {
      out.push(fromTrace(readTraceFile(path), path));
    } catch (e) {
      if (!(e instanceof TraceCorruptError)) throw e;
      // Folders hold other JSONL too (scripted agents, exports): only traces count.
      log.debug(`skipping ${path}: ${e.message}`);
    }
  }
  return out;
}
