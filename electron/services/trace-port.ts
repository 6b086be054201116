import { z } from 'zod';
import { FlagSummary, type BranchSummary, type SearchHit } from '../../shared/contract/index.js';
import { logger } from '../engine/log.js';
import { EpisodeStatus, type TraceEvent } from '../../shared/trace-events.js';
import { engineError } from '../engine/engine-error.js';
import {
  type EpisodeIndex,
  type BranchRow,
  type EpisodeRow,
  type SearchQuery,
} from '../engine/trace/episode-index.js';
import type { DiskEpisodeStore } from '../engine/trace/episode-store.js';
import type { StoredBranches } from '../engine/trace/stored-branches.js';
import type { BranchTrace } from './branch-trace.js';
import { readBranch } from './branch-trace.js';
import { watchStore } from '../engine/trace/store-watch.js';
import { unreadableEpisodes } from '../engine/trace/unreadable-episodes.js';
import { currentFlags } from '../engine/qa/check-branches.js';
import type { TracePort } from './ports.js';
import type { SnapshotStore } from '../engine/sandbox/snapshot-store.js';
import { TraceMemo } from './trace-memo.js';
import { agentTraitsOf } from '../engine/agents/agent-driver.js';
import { flagRulesId } from '../engine/qa/flag-rules.js';

const log = logger('library');

/** Free-text search reads at most this many traces (the structured filters use the index). */
const MAX_SCANNED = 500;

/**
 * Parses `tool:NAME error:CODE flag:RULE memory:KEY[=VALUE]` filters; the remaining words
 * are free text. Filters go to the SQLite index; free text scans the traces.
 */
export function parseSearch(query: string): { filters: SearchQuery | null; text: string } {
  const filters: { tool?: string; error?: string; flag?: string; memory?: { key: string; value?: string } } =
    {};
  const words: string[] = [];
  let any = false;
  for (const word of query.trim().split(/\s+/)) {
    const m = /^(tool|error|flag|memory):(.+)$/.exec(word);
    if (!m) {
      if (word) words.push(word);
      continue;
    }
    any = true;
    if (m[1] === 'memory') {
      const [key, ...value] = m[2].split('=');
      filters.memory = value.length ? { key, value: value.join('=') } : { key };
    } else filters[m[1] as 'tool' | 'error' | 'flag'] = m[2];
  }
  return { filters: any ? filters : null, text: words.join(' ') };
}

/** A branch as the library lists it, from its index rows (`running`: an open trace, no status yet). */
function summaryOfRow(ep: EpisodeRow, row: BranchRow): BranchSummary {
  const status = EpisodeStatus.safeParse(row.status);
  return {
    episode: ep.id,
    branch: row.id,
    parent_branch: row.parent,
    fork_step: row.fork_step,
    task: ep.task,
    agent: ep.agent,
    agent_kind: ep.agentKind,
    agent_traits: agentTraitsOf(ep.agentKind),
    status: status.success ? status.data : null,
    end_reason: row.end_reason,
    steps: row.steps,
    unfinished: row.unfinished,
    return: row.return,
    gamma: row.gamma,
    final_reward: row.final_reward,
    flags: row.flags,
    created: row.created,
    live: false,
    candidate: row.candidate,
  };
}

/**
 * The trace port over the disk store: the library lists from the engine's SQLite index
 * (open-engine.ts), refreshed per call.
 */
export function storeTracePort(engine: {
  readonly store: DiskEpisodeStore;
  index(): EpisodeIndex;
}): TracePort {
  const store = engine.store;
  const memo = new TraceMemo(store);
  // The index reads changed traces through the memo too, so one open parses its trace once.
  const stored: StoredBranches = {
    home: store.home,
    listEpisodes: () => store.listEpisodes(),
    branchesOrNone: (episode) => store.branchesOrNone(episode),
    unlistedFolders: () => store.unlistedFolders(),
    readTrace: (branch) => memo.read(branch),
    branchClosed: (episode, branch) => store.branchClosed(episode, branch),
  };
  // The index keeps the flags the listing computed, with the trace version they came from:
  // an unchanged trace's are read back, not recomputed over every event (issue 19.10). The
  // same function gives `show` its flags (one source).
  const check = (bt: BranchTrace) => {
    // The version the trace was read at, so the flags computed from it are kept under it.
    const at = memo.versionOfTrace(bt.info, bt.trace);
    return memo.flagsOf(bt.info, at, async () =>
      z.array(FlagSummary).parse(await currentFlags(store, engine.index(), bt.info, bt.trace, at)),
    );
  };
  const port: TracePort = {
    watch: (onChange) => watchStore(store.home, onChange),
    async listBranches() {
      // The index holds status, steps, reward, flags and the branch tree; only traces that
      // changed since they were indexed, or whose flags were never computed, are read.
      const index = engine.index();
      index.refresh(stored);
      const unchecked = new Set(index.uncheckedBranches(flagRulesId()));
      const out: BranchSummary[] = [];
      for (const ep of index.listEpisodes(-1)) {
        for (const row of ep.branches) {
          try {
            let current = row;
            if (unchecked.has(row.id)) {
              const flags = await check(readBranch(port, row.id));
              current = { ...row, flags: flags.length };
            }
            out.push(summaryOfRow(ep, current));
          } catch (e) {
            // One unreadable trace must not hide the others; `stepbox show` says what is wrong.
            log.warn(`${row.id}: not listed: ${e instanceof Error ? e.message : String(e)}`);
          }
        }
      }
      return out;
    },
    unreadable() {
      // As the last refresh (listBranches') found them.
      return unreadableEpisodes(engine.index()).map((u) => ({
        episode: u.id,
        branch: u.branch,
        message: u.message,
        file: u.file,
        fix: u.fix,
      }));
    },
    async search(query, limit) {
      const { filters, text } = parseSearch(query);
      let hits: SearchHit[] = [];
      if (filters) {
        const index = engine.index();
        index.refresh(stored);
        hits = index.search({ ...filters, limit }).flatMap((m) =>
          m.hits.map((h) => ({
            episode: m.episode,
            branch: m.branch,
            step: h.step,
            snippet: `${h.filter}: ${h.detail}`,
          })),
        );
        if (!text) return hits.slice(0, limit);
      }
      const needle = text.toLowerCase();
      const allowed = filters ? new Set(hits.map((h) => h.branch)) : null;
      const found: SearchHit[] = [];
      let scanned = 0;
      for (const episode of store.listEpisodes()) {
        for (const info of store.listBranches(episode)) {
          if (found.length >= limit || scanned++ >= MAX_SCANNED) return found;
          if (allowed && !allowed.has(info.branch)) continue;
          let events: readonly TraceEvent[];
          try {
            events = store.readTrace(info).events;
          } catch (e) {
            // Named in the library's unreadable list (with the fix); it must not fail the search.
            if (engineError(e)?.code === 'trace_corrupt') continue;
            throw e;
          }
          for (const e of events) {
            const line = JSON.stringify(e);
            const at = line.toLowerCase().indexOf(needle);
            if (at < 0) continue;
            found.push({
              episode,
              branch: info.branch,
              step: e.step,
              snippet: line.slice(Math.max(0, at - 40), at + 80),
            });
            break;
          }
        }
      }
      return found;
    },
    resolve: (id) => store.resolve(id),
    branchesOf: (episode) => store.listBranches(episode),
    read: (branch) => memo.read(branch),
    version: (branch) => memo.version(branch),
    check,
    snapshots: keptSnapshots(store),
  };
  return port;
}

/** Episodes whose snapshot stores the window's reads keep (the one opened and a few beside it). */
const SNAPSHOT_STORES_KEPT = 8;

/**
 * The episode's snapshot store, one per episode, kept: a store holds the manifests it read
 * (a step's Files tab reads the step's and the one before, each neighbour fetched ahead two
 * more) and its packs' indexes. A store made per call had read none, so every step the
 * inspector showed read, parsed and checked its manifests from disk again, through the thread
 * pool the running episodes' snapshots use (issue 33.9). What a store keeps is named by
 * content (a manifest's id is its hash, a pack's name its index's hash): never stale.
 */
function keptSnapshots(store: DiskEpisodeStore): (episode: string) => SnapshotStore {
  const kept = new Map<string, SnapshotStore>();
  return (episode) => {
    const hit = kept.get(episode) ?? store.snapshots(episode);
    kept.delete(episode);
    kept.set(episode, hit);
    while (kept.size > SNAPSHOT_STORES_KEPT) kept.delete(kept.keys().next().value as string);
    return hit;
  };
}
