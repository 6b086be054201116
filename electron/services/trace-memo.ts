import { lstatSync } from 'node:fs';
import { standsFor, versionKey, versionOf, type FileVersion } from '../engine/trace/file-version.js';
import type { FlagSummary } from '../../shared/contract/index.js';
import type { DiskEpisodeStore } from '../engine/trace/episode-store.js';
import type { ParsedTrace } from '../engine/trace/trace-reader.js';
import type { BranchInfo } from '../engine/trace/trace-store.js';

/** Branches whose parsed trace and flags are kept: the one being opened and a few around it. */
const KEEP = 4;

/**
 * The last few traces the window read, parsed, and their QA flags, keyed by the trace
 * file's version (see FileVersion): opening a 10,000-step trace once read and checked it
 * three times — the index refresh, the library's unchecked flags and the opened view each
 * parsed it, and two of them ran every QA rule over it (issue 19.10). A changed file (a
 * live branch's new step) has a new version and is read again.
 */
export class TraceMemo {
  private readonly traces = new Map<string, { version: string; at: TraceVersion; trace: ParsedTrace }>();
  private readonly flags = new Map<string, { version: string; flags: readonly FlagSummary[] }>();
  /** Flags being computed, by branch, with the version they are for: asked again meanwhile, that answer. */
  private readonly computing = new Map<string, { version: string; flags: Promise<FlagSummary[]> }>();

  constructor(private readonly store: DiskEpisodeStore) {}

  /** The trace file's version: what it is now, read before its content so a change is never missed. */
  version(info: BranchInfo): string {
    return keyOf(this.traces.get(info.branch)?.version, this.versionAt(info));
  }

  private versionAt(info: BranchInfo): TraceVersion {
    return movedOnce(() => {
      const path = this.store.currentTracePath(info);
      // The file's own stat: a link in a trace's place is refused by the reader in its words,
      // not followed here to an ENOENT that reached the window as an internal error.
      return versionOf(path, lstatSync(path));
    });
  }

  /** The branch's own trace, parsed once per version. */
  read(info: BranchInfo): ParsedTrace {
    const at = this.versionAt(info);
    const hit = this.traces.get(info.branch);
    const version = keyOf(hit?.version, at);
    if (hit && hit.version === version) return touch(this.traces, info.branch, hit).trace;
    const trace = movedOnce(() => this.store.readTrace(info));
    touch(this.traces, info.branch, { version, at, trace });
    return trace;
  }

  /**
   * The version `trace` was read at (by {@link read}): the stat taken before its content, so
   * the content is that version or newer, never older. Null for a trace this memo did not read
   * (or no longer holds).
   */
  versionOfTrace(info: BranchInfo, trace: object): TraceVersion | null {
    const hit = this.traces.get(info.branch);
    return hit && hit.trace === trace ? hit.at : null;
  }

  /**
   * The flags of `trace`, read at version `at` (see {@link versionOfTrace}), computed once per
   * version by `compute`; a trace of no known version is computed and not kept. Kept under the
   * version the content was read at, never under the file's version when they are asked for: a
   * branch read before its end was written and checked after had its flags (without the end's,
   * `unverified_success`) kept under the ended file's version, and every later open showed
   * them (ui-flagged-success, twice under load: "2 QA flags" for 3).
   */
  async flagsOf(
    info: BranchInfo,
    at: TraceVersion | null,
    compute: () => Promise<FlagSummary[]>,
  ): Promise<FlagSummary[]> {
    if (at === null) return [...(await compute())];
    const hit = this.flags.get(info.branch);
    const version = keyOf(hit?.version ?? this.computing.get(info.branch)?.version, at);
    if (hit && hit.version === version) return [...touch(this.flags, info.branch, hit).flags];
    // Asked again while they are computed (a window's open and its library listings, each
    // refresh of a second window): the one computation, not one each. Five at once ran every
    // QA rule over a 10,000-step trace, 250-800 ms of this process each, right after an open.
    const running = this.computing.get(info.branch);
    if (running && running.version === version) return [...(await running.flags)];
    const computing = compute();
    this.computing.set(info.branch, { version, flags: computing });
    try {
      const flags = await computing;
      touch(this.flags, info.branch, { version, flags });
      return [...flags];
    } finally {
      if (this.computing.get(info.branch)?.flags === computing) this.computing.delete(info.branch);
    }
  }
}

/** A trace file as it was at one moment: the version flags and parsed traces are kept under. */
export type TraceVersion = FileVersion;

/**
 * The string `at` is kept under here: its own ({@link versionKey}), or the unsettled version's
 * that `kept` is when `at` holds the very bytes read under it (file-version.ts's standsFor): a
 * trace opened right after it was written is not read and checked again once it settles.
 */
function keyOf(kept: string | undefined, at: TraceVersion): string {
  const own = versionKey(at);
  return kept !== undefined && kept !== own && kept === standsFor(at) ? kept : own;
}

/**
 * Runs `read` again once when the trace was not where it looked: a branch's trace moves from
 * `.jsonl` to `.jsonl.gz` as the branch closes, and a read between the check of which exists
 * and the open found neither (the window's reload of an ended episode then failed, and its
 * end never showed: ui-stop-before-tool, once in a full run).
 */
export function movedOnce<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    return read();
  }
}

/** Marks an entry most recently used (Map order) and drops the oldest past KEEP. */
function touch<T>(map: Map<string, T>, key: string, value: T): T {
  map.delete(key);
  map.set(key, value);
  while (map.size > KEEP) map.delete(map.keys().next().value as string);
  return value;
}
