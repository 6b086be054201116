import type { WorkspaceFileDiff } from '../../../shared/contract/models.js';
import { checkEpisode } from '../../../shared/qa/check-episode.js';
import type { Flag } from '../../../shared/qa/flag.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { diffManifests, type FileDiffStatus } from '../sandbox/manifest.js';
import type { SnapshotManifest, SnapshotStore } from '../sandbox/snapshot-store.js';
import { textAt } from '../sandbox/snapshot-text.js';
import { branchOutcome, type BranchOutcome } from '../trace/branch-outcome.js';
import { lastSnapshot, readLineage, type Lineage } from '../trace/lineage.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import { stepFactsOf } from './step-facts.js';
import { alignSteps, type StepPair } from './step-alignment.js';

/** Workspace diffs per compared step: enough to see what differs without loading a repo. */
export const MAX_DIFF_FILES = 20;

/** One side of a comparison: a branch's events with its ancestry, and the store of the snapshots they name. */
export interface CompareSide {
  readonly events: readonly TraceEvent[];
  readonly snapshots: SnapshotStore;
}

/** A file that differs between two aligned steps' workspaces; with `texts`, each side's text. */
export interface ComparedFile {
  readonly path: string;
  readonly status: FileDiffStatus;
  readonly a?: WorkspaceFileDiff['a'];
  readonly b?: WorkspaceFileDiff['b'];
}

/** Two aligned steps, their verdict and the files that differ between their workspaces. */
export interface ComparedPair extends StepPair {
  /** At most {@link MAX_DIFF_FILES}; empty for a `same` pair, a one-sided pair or a step with no snapshot. */
  readonly workspace: readonly ComparedFile[];
}

/** Two branches' steps aligned, with workspace diffs: what `stepbox diff` and the window's compare show. */
export interface StepComparison {
  readonly pairs: ComparedPair[];
  /** The first step, in A's numbering, whose action or what-the-agent-saw differs; null when none. */
  readonly diverged_at: number | null;
  /** The index in `pairs` of that first difference, null when none (see {@link alignSteps}). */
  readonly diverged_pair: number | null;
  /** Paths whose content differs between the two branches' last workspaces (sorted). */
  readonly files_differ: string[];
}

/**
 * THE step-aligned comparison of two branches: pairs of steps matched by their decisions
 * (an inserted step does not shift the rest), each with its verdict and the files that
 * differ after it (only pairs that differ are diffed: a long shared prefix costs nothing),
 * the first divergence in A's numbering (what the agent saw counts), and the files that
 * differ at the end. `texts` adds each differing file's text on both sides.
 */
export async function compareSteps(
  a: CompareSide,
  b: CompareSide,
  options: { texts?: boolean } = {},
): Promise<StepComparison> {
  const [fa, fb] = [stepFactsOf(a.events), stepFactsOf(b.events)];
  const { pairs, diverged_at, diverged_pair } = alignSteps(fa, fb);
  const manifestsA = new Map(fa.map((f) => [f.step, f.manifest]));
  const manifestsB = new Map(fb.map((f) => [f.step, f.manifest]));
  const out: ComparedPair[] = [];
  for (const p of pairs) {
    const ma = p.a_step === null ? null : (manifestsA.get(p.a_step) ?? null);
    const mb = p.b_step === null ? null : (manifestsB.get(p.b_step) ?? null);
    const workspace =
      p.verdict === 'same' || ma === null || mb === null || ma === mb
        ? []
        : await workspaceDiff(a.snapshots, ma, b.snapshots, mb, options.texts ?? false);
    out.push({ ...p, workspace });
  }
  return { pairs: out, diverged_at, diverged_pair, files_differ: await filesDiffer(a, b) };
}

async function workspaceDiff(
  sa: SnapshotStore,
  ida: string,
  sb: SnapshotStore,
  idb: string,
  texts: boolean,
): Promise<ComparedFile[]> {
  const [ma, mb] = await Promise.all([sa.getManifest(ida), sb.getManifest(idb)]);
  const diffs = diffManifests(ma, mb).slice(0, MAX_DIFF_FILES);
  if (!texts) return diffs;
  return Promise.all(diffs.map((d) => withTexts(d, sa, ma, sb, mb)));
}

async function withTexts(
  d: ComparedFile,
  sa: SnapshotStore,
  ma: SnapshotManifest,
  sb: SnapshotStore,
  mb: SnapshotManifest,
): Promise<ComparedFile> {
  const [x, y] = await Promise.all([textAt(sa, ma, d.path), textAt(sb, mb, d.path)]);
  return { ...d, a: x.text, b: y.text };
}

async function filesDiffer(a: CompareSide, b: CompareSide): Promise<string[]> {
  const [sa, sb] = [lastSnapshot(a.events), lastSnapshot(b.events)];
  if (!sa || !sb || sa.tree_hash === sb.tree_hash) return [];
  const [ma, mb] = await Promise.all([
    a.snapshots.getManifest(sa.manifest),
    b.snapshots.getManifest(sb.manifest),
  ]);
  return diffManifests(ma, mb).map((d) => d.path);
}

/** One side of `stepbox diff`: how the branch ended, its outcome and its QA flags. */
export interface ComparedBranch extends BranchOutcome {
  readonly episode: string;
  readonly branch: string;
  /** `running` while no end is recorded. */
  readonly status: string;
  readonly end_reason: string | null;
  readonly flags: Pick<Flag, 'rule' | 'step' | 'severity' | 'message'>[];
}

/** Two branches compared step-aligned (the `stepbox diff --json` document). */
export interface BranchComparison extends StepComparison {
  readonly a: ComparedBranch;
  readonly b: ComparedBranch;
}

/**
 * Compares two branches or episodes of the store ({@link compareSteps}, without file
 * texts), with each side's status, outcome and QA flags.
 */
export async function compareBranches(store: EpisodeStore, a: string, b: string): Promise<BranchComparison> {
  const [la, lb] = [readLineage(store, store.resolve(a)), readLineage(store, store.resolve(b))];
  const side = (l: Lineage): CompareSide => ({
    events: [...l.events, ...l.partial],
    snapshots: store.snapshots(l.branch.episode),
  });
  return { ...(await compareSteps(side(la), side(lb))), a: comparedBranch(la), b: comparedBranch(lb) };
}

function comparedBranch(l: Lineage): ComparedBranch {
  const end = l.trace.end;
  const events: TraceEvent[] = [l.trace.header, ...l.events];
  if (end && events[events.length - 1]?.type !== 'end') events.push(end);
  const { flags } = checkEpisode({ events, torn: l.trace.torn, open: end === null });
  return {
    episode: l.branch.episode,
    branch: l.branch.branch,
    status: end?.status ?? 'running',
    end_reason: end?.end_reason ?? null,
    ...branchOutcome(l.header, [...l.events, ...l.partial], end),
    // `structure` judges one trace file's numbering, which a fork's lineage (two files joined) does not keep.
    flags: flags
      .filter((f) => f.rule !== 'structure' || l.branch.parentBranch === null)
      .map((f) => ({ rule: f.rule, step: f.step, severity: f.severity, message: f.message })),
  };
}
