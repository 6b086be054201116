import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseTask, type Task } from '../../../shared/task.js';
import { logger } from '../log.js';
import { openEpisodeStore, StoreError, type DiskEpisodeStore } from '../trace/episode-store.js';
import { readTraceFile, TraceCorruptError, type ParsedTrace } from '../trace/trace-reader.js';

const log = logger('qa');

/** One branch to judge, report or export. */
export interface LoadedBranch {
  readonly episode: string;
  readonly branch: string;
  readonly parentBranch: string | null;
  readonly forkStep: number | null;
  readonly tracePath: string;
  readonly trace: ParsedTrace;
  /** The header's task with defaults, or null when it does not parse. */
  readonly task: Task | null;
  /** The batch slot it fills, when loaded from a batch folder. */
  readonly slot?: { readonly task: string; readonly index: number };
  /** The store holding it, when not the caller's (a batch recorded under another $STEPBOX_HOME). */
  readonly store?: DiskEpisodeStore;
}

/** The header's task, defaults filled; null if it does not parse. */
export function taskOf(trace: ParsedTrace): Task | null {
  const parsed = parseTask(trace.header.task, 'the header task');
  return parsed.ok ? parsed.value : null;
}

function fromTrace(
  trace: ParsedTrace,
  path: string,
  slot?: LoadedBranch['slot'],
  store?: DiskEpisodeStore,
): LoadedBranch {
  return {
    episode: trace.header.episode,
    branch: trace.header.branch,
    parentBranch: trace.header.parent_branch,
    forkStep: trace.header.fork_step,
    tracePath: path,
    trace,
    task: taskOf(trace),
    slot,
    store,
  };
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

/**
 * Loads what an `EPISODE|DIR` argument names: a batch folder (its `batch.json` slots,
 * every branch of each slot's episode), any other folder (every trace file under it), or
 * an episode/branch id (that branch). `allBranches` adds an id's or batch's forks.
 */
export function loadBranches(
  target: string,
  store: DiskEpisodeStore,
  options: { allBranches?: boolean } = {},
): LoadedBranch[] {
  if (existsSync(target) && statSync(target).isDirectory()) {
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
      const own =
        batch.home && resolve(batch.home) !== resolve(store.home) && existsSync(batch.home)
          ? openEpisodeStore(batch.home, { skipMarkInterrupted: true })
          : null;
      const from = own ?? store;
      const out: LoadedBranch[] = [];
      for (const slot of batch.slots ?? []) {
        if (!slot.episode) continue;
        const branches = options.allBranches
          ? from.listBranches(slot.episode)
          : [from.branchInfo(slot.episode, slot.episode)];
        for (const b of branches) {
          const path = from.currentTracePath(b);
          out.push(
            fromTrace(readTraceFile(path), path, { task: slot.task, index: slot.index }, own ?? undefined),
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
  const info = store.resolve(target);
  const branches = options.allBranches ? store.listBranches(info.episode) : [info];
  return branches.map((b) => {
    const path = store.currentTracePath(b);
    return fromTrace(readTraceFile(path), path);
  });
}
