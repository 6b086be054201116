import { checkEpisode } from '../../../shared/qa/check-episode.js';
import type { Flag } from '../../../shared/qa/flag.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { lastSnapshot, readLineage, type Lineage } from '../trace/lineage.js';
import { diffEntries } from '../sandbox/manifest.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import { stepFactsOf } from './step-facts.js';
import { alignSteps, type StepAlignment } from './step-alignment.js';

/** One side of a comparison: how the branch ended, its reward and its QA flags. */
export interface BranchOutcome {
  readonly episode: string;
  readonly branch: string;
  /** `running` while no end is recorded. */
  readonly status: string;
  readonly end_reason: string | null;
  readonly steps: number;
  /** The final reward's total (the verifier's), or the return when no final reward was recorded; null while open. */
  readonly reward: number | null;
  readonly flags: Pick<Flag, 'rule' | 'step' | 'severity' | 'message'>[];
}

/** Two branches compared step-aligned (the `stepbox diff --json` document). */
export interface BranchComparison extends StepAlignment {
  /** Paths whose content differs between the two branches' last workspaces (sorted). */
  readonly files_differ: string[];
  readonly a: BranchOutcome;
  readonly b: BranchOutcome;
}

/**
 * Compares two branches or episodes of the store, step-aligned: pairs of steps with
 * their verdicts, the first divergence in A's numbering (what the agent saw counts), the
 * files that differ at the end, and each side's status, reward and QA flags.
 */
export async function compareBranches(store: EpisodeStore, a: string, b: string): Promise<BranchComparison> {
  const [la, lb] = [readLineage(store, store.resolve(a)), readLineage(store, store.resolve(b))];
  const alignment = alignSteps(stepFactsOf(la.events), stepFactsOf(lb.events));
  return {
    ...alignment,
    files_differ: await filesDiffer(store, la, lb),
    a: outcomeOf(la),
    b: outcomeOf(lb),
  };
}

async function filesDiffer(store: EpisodeStore, a: Lineage, b: Lineage): Promise<string[]> {
  const [sa, sb] = [lastSnapshot(a.events), lastSnapshot(b.events)];
  if (!sa || !sb || sa.tree_hash === sb.tree_hash) return [];
  const [ma, mb] = await Promise.all([
    store.snapshots(a.branch.episode).getManifest(sa.manifest),
    store.snapshots(b.branch.episode).getManifest(sb.manifest),
  ]);
  // Directories differ only through their files; a file's content, mode or kind counts.
  const files = (m: typeof ma) => m.entries.filter((e) => e.type !== 'dir');
  return diffEntries(files(ma), files(mb)).map((c) => c.path);
}

function outcomeOf(l: Lineage): BranchOutcome {
  const end = l.trace.end;
  const events: TraceEvent[] = [l.trace.header, ...l.events];
  if (end && events[events.length - 1]?.type !== 'end') events.push(end);
  const { flags } = checkEpisode({ events, torn: l.trace.torn, open: end === null });
  const finals = l.events.filter((e) => e.type === 'reward' && e.final);
  const last = finals[finals.length - 1];
  return {
    episode: l.branch.episode,
    branch: l.branch.branch,
    status: end?.status ?? 'running',
    end_reason: end?.end_reason ?? null,
    steps: end?.steps ?? lastSnapshot(l.events)?.step ?? 0,
    reward: last?.type === 'reward' ? last.total : (end?.return ?? null),
    // `structure` judges one trace file's numbering, which a fork's lineage (two files joined) does not keep.
    flags: flags
      .filter((f) => f.rule !== 'structure' || l.branch.parentBranch === null)
      .map((f) => ({ rule: f.rule, step: f.step, severity: f.severity, message: f.message })),
  };
}
