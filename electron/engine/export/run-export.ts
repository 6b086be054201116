import { isPersonEdit, type TraceEvent } from '../../../shared/trace-events.js';
import { readLineage } from '../trace/lineage.js';
import { branchEvents, type BranchCheck } from '../qa/check-branches.js';
import type { LoadedBranch } from '../qa/episode-set.js';
import type { Choice } from '../candidates/choice-log.js';
import { choicePair, correctionPair, type PreferencePair } from './dpo-jsonl.js';
import { fineTuneRecord, validateFineTuneRecord } from './openai-jsonl.js';
import { atifTrajectory } from './atif.js';
import { branchSpans, otlpDocument, type OtlpSpan } from './otel-json.js';
import { redactEvents, redactValue, type Redaction } from './redact.js';

/** The export formats. */
export const EXPORT_FORMATS = ['openai-jsonl', 'otel-json', 'dpo-jsonl', 'atif'] as const;
/** An export format. */
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Options of {@link buildExport}. */
export interface ExportOptions {
  readonly format: ExportFormat;
  /** Keep only branches whose quality is at least this (openai-jsonl, otel-json; both sides of a pair for dpo-jsonl). */
  readonly minQuality?: number;
  /** Leave out branches (or pairs) holding injected or human-typed content instead of labelling it. */
  readonly excludeInjected: boolean;
  /**
   * openai-jsonl: also keep episodes that did not succeed (failed, timeout, error,
   * interrupted, still running). Off by default: a fine-tune should not learn from them.
   */
  readonly includeFailed?: boolean;
  readonly redaction: Redaction;
  /** Choices among candidates (dpo-jsonl): each gives one pair. */
  readonly choices?: readonly Choice[];
}

/** What an export produced: the document text, sidecar lines, and what it left out and why. */
export interface ExportResult {
  /** JSONL (one record per line) or one JSON document. */
  readonly text: string;
  /** Sidecar records (`*.meta.jsonl`): one per output line, with quality and provenance. */
  readonly meta: Record<string, unknown>[];
  readonly count: number;
  readonly skipped: { branch: string; reason: string }[];
  /**
   * ATIF only: each trajectory as its own JSON document (what Harbor reads as
   * `trajectory.json`), named `<branch>.json`; `text` holds the same as JSON lines.
   */
  readonly documents?: readonly { name: string; text: string }[];
}

/**
 * A branch's events with its ancestry, header first, through the one lineage reader (a
 * fork takes steps 1..K from its parent); null when an ancestor is not among the loaded
 * branches (the export then skips it).
 */
function fullEvents(b: LoadedBranch, byBranch: ReadonlyMap<string, LoadedBranch>): TraceEvent[] | null {
  let missing = false;
  const lineage = readLineage(
    {
      resolve: (id) => {
        const found = byBranch.get(id);
        if (found) return found;
        missing = true;
        throw new Error(`${id} is not loaded`);
      },
      readTrace: (info) => (info === b ? b.trace : byBranch.get(info.branch)!.trace),
    },
    b,
  );
  if (missing) return null;
  return [lineage.header, ...lineage.events, ...lineage.partial];
}

function touchedByPerson(events: readonly TraceEvent[]): boolean {
  return events.some(
    (e) => e.type === 'injected' || e.type === 'override' || e.type === 'human_command' || isPersonEdit(e),
  );
}

/** Builds an export of loaded branches with their QA verdicts. */
export function buildExport(
  branches: readonly LoadedBranch[],
  checks: ReadonlyMap<string, BranchCheck>,
  options: ExportOptions,
): ExportResult {
  const byBranch = new Map(branches.map((b) => [b.branch, b]));
  const skipped: ExportResult['skipped'] = [];
  const meta: Record<string, unknown>[] = [];
  const min = options.minQuality ?? 0;
  const r = options.redaction;
  if (options.format === 'dpo-jsonl') return dpoExport(branches, byBranch, checks, options);
  const chosen: { b: LoadedBranch; events: TraceEvent[]; check: BranchCheck }[] = [];
  for (const b of branches) {
    const check = checks.get(b.branch);
    const events = fullEvents(b, byBranch);
    if (!check || !events || !b.task) {
      skipped.push({
        branch: b.branch,
        reason: !b.task ? 'its header task does not parse' : 'its parent is not in the export',
      });
      continue;
    }
    if (check.quality < min) {
      skipped.push({ branch: b.branch, reason: `quality ${check.quality} below ${min}` });
      continue;
    }
    const status = b.trace.end?.status ?? 'running';
    if (options.format === 'openai-jsonl' && !options.includeFailed && status !== 'succeeded') {
      skipped.push({
        branch: b.branch,
        reason: `it ended ${status}, not succeeded (--include-failed keeps it)`,
      });
      continue;
    }
    if (options.excludeInjected && touchedByPerson(events)) {
      skipped.push({
        branch: b.branch,
        reason: 'holds injected or human-typed content (--exclude-injected)',
      });
      continue;
    }
    chosen.push({ b, events: redactEvents(events, r), check });
  }
  if (options.format === 'atif') {
    // One ATIF trajectory per branch, with what it inherited (ATIF-v1.7).
    const docs = chosen.map((c) => atifTrajectory(c.events));
    const lines = docs.map((d) => JSON.stringify(d));
    for (const c of chosen)
      meta.push({
        episode: c.b.episode,
        branch: c.b.branch,
        quality: c.check.quality,
        flags: c.check.flags.map((f) => f.rule),
      });
    return {
      text: lines.map((l) => l + '\n').join(''),
      meta,
      count: lines.length,
      skipped,
      documents: chosen.map((c, i) => ({
        name: `${c.b.branch}.json`,
        text: JSON.stringify(docs[i], null, 2) + '\n',
      })),
    };
  }
  if (options.format === 'otel-json') {
    const spans: OtlpSpan[] = [];
    for (const c of chosen) {
      spans.push(...branchSpans(c.events));
      meta.push({
        episode: c.b.episode,
        branch: c.b.branch,
        quality: c.check.quality,
        flags: c.check.flags.map((f) => f.rule),
      });
    }
    return { text: JSON.stringify(otlpDocument(spans), null, 2) + '\n', meta, count: chosen.length, skipped };
  }
  const lines: string[] = [];
  for (const c of chosen) {
    const built = fineTuneRecord(c.b.task!, c.events, c.check.flags);
    if (!built) {
      skipped.push({ branch: c.b.branch, reason: 'no assistant turn' });
      continue;
    }
    const record = redactValue(built.record, r);
    const problems = validateFineTuneRecord(record);
    if (problems.length) {
      skipped.push({ branch: c.b.branch, reason: `not a valid fine-tuning record: ${problems[0]}` });
      continue;
    }
    lines.push(JSON.stringify(record));
    meta.push({
      line: lines.length,
      episode: c.b.episode,
      branch: c.b.branch,
      task: c.b.task!.name,
      status: c.b.trace.end?.status ?? null,
      quality: c.check.quality,
      flags: c.check.flags.map((f) => ({ step: f.step, severity: f.severity, id: f.rule })),
      person_messages: built.person,
      // Faults the task injected (latency, permission errors, tool failures): their results are not the tool's own.
      faults: c.events.flatMap((e) =>
        e.type === 'fault' ? [{ step: e.step, kind: e.kind, call_id: e.call_id ?? null }] : [],
      ),
    });
  }
  return { text: lines.map((l) => l + '\n').join(''), meta, count: lines.length, skipped };
}

/**
 * Preference pairs: one per choice among candidates and one per corrected fork (see
 * {@link correctionPair}); never a pair whose two sides decide the same. The sidecar
 * names each pair's episode, step, branches and why it was made.
 */
function dpoExport(
  branches: readonly LoadedBranch[],
  byBranch: ReadonlyMap<string, LoadedBranch>,
  checks: ReadonlyMap<string, BranchCheck>,
  options: ExportOptions,
): ExportResult {
  const r = options.redaction;
  const min = options.minQuality ?? 0;
  const skipped: ExportResult['skipped'] = [];
  const meta: Record<string, unknown>[] = [];
  const lines: string[] = [];
  const lineage = (b: LoadedBranch) => {
    const events = fullEvents(b, byBranch);
    return events ? redactEvents(events, r) : null;
  };
  const emit = (episode: string, pair: PreferencePair, quality: Record<string, number | null>) => {
    if (
      options.excludeInjected &&
      pair.record.input.messages.some((m) => m.name === 'injected' || m.name === 'human')
    ) {
      skipped.push({
        branch: pair.preferred,
        reason: 'its input holds injected content (--exclude-injected)',
      });
      return;
    }
    lines.push(JSON.stringify(redactValue(pair.record, r)));
    meta.push({
      line: lines.length,
      episode,
      step: pair.step,
      reason: pair.reason,
      why: pair.why,
      preferred_branch: pair.preferred,
      rejected_branch: pair.rejected,
      ...(pair.reason === 'corrected'
        ? { parent: pair.rejected, fork: pair.preferred, preferred: 'fork' }
        : {}),
      quality,
    });
  };
  const inChoice = new Set((options.choices ?? []).flatMap((c) => [c.chosen, ...c.rejected]));
  for (const fork of branches) {
    if (fork.parentBranch === null || inChoice.has(fork.branch)) continue;
    const parent = byBranch.get(fork.parentBranch);
    const pc = checks.get(fork.parentBranch);
    const fc = checks.get(fork.branch);
    const parentEvents = parent ? lineage(parent) : null;
    if (!parent || !pc || !fc || !parentEvents || !parent.task) {
      skipped.push({ branch: fork.branch, reason: `its parent ${fork.parentBranch} is not in the export` });
      continue;
    }
    const own = branchEvents(fork);
    if (Math.min(pc.quality, fc.quality) < min && !touchedByPerson(own)) {
      skipped.push({ branch: fork.branch, reason: `quality below ${min}` });
      continue;
    }
    const pair = correctionPair(
      parent.task,
      {
        branch: parent.branch,
        parentBranch: parent.parentBranch,
        forkStep: parent.forkStep,
        events: parentEvents,
      },
      {
        branch: fork.branch,
        parentBranch: fork.parentBranch,
        forkStep: fork.forkStep,
        events: redactEvents(own, r),
      },
    );
    if (!pair) {
      skipped.push({
        branch: fork.branch,
        reason:
          'not a corrected fork (no person-made change before its first step, a resumed branch, or the same decision as its parent)',
      });
      continue;
    }
    emit(fork.episode, pair, { parent: pc.quality, fork: fc.quality });
  }
  for (const choice of options.choices ?? []) {
    const chosen = byBranch.get(choice.chosen);
    const chosenEvents = chosen ? lineage(chosen) : null;
    if (!chosen || !chosenEvents || !chosen.task) {
      skipped.push({
        branch: choice.chosen,
        reason: `the chosen candidate of ${choice.group} is not in the export`,
      });
      continue;
    }
    const rejected = choice.rejected.flatMap((id) => {
      const b = byBranch.get(id);
      const events = b ? lineage(b) : null;
      return b && events ? [{ branch: id, parentBranch: b.parentBranch, forkStep: b.forkStep, events }] : [];
    });
    const pair = choicePair(
      chosen.task,
      choice.step,
      {
        branch: chosen.branch,
        parentBranch: chosen.parentBranch,
        forkStep: chosen.forkStep,
        events: chosenEvents,
      },
      rejected,
    );
    if (!pair) {
      skipped.push({
        branch: choice.chosen,
        reason: `choice ${choice.group}: no rejected candidate decided differently from the chosen one`,
      });
      continue;
    }
    emit(choice.episode, pair, {
      preferred: checks.get(pair.preferred)?.quality ?? null,
      rejected: checks.get(pair.rejected)?.quality ?? null,
    });
  }
  return { text: lines.map((l) => l + '\n').join(''), meta, count: lines.length, skipped };
}
