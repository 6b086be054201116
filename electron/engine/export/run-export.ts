import type { TraceEvent } from '../../../shared/trace-events.js';
import { cutAtStep } from '../trace/lineage.js';
import { branchEvents, type BranchCheck } from '../qa/check-branches.js';
import type { LoadedBranch } from '../qa/episode-set.js';
import { preferencePair } from './dpo-jsonl.js';
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
}

/** What an export produced: the document text, sidecar lines, and what it left out and why. */
export interface ExportResult {
  /** JSONL (one record per line) or one JSON document. */
  readonly text: string;
  /** Sidecar records (`*.meta.jsonl`): one per output line, with quality and provenance. */
  readonly meta: Record<string, unknown>[];
  readonly count: number;
  readonly skipped: { branch: string; reason: string }[];
}

/** A branch's events with its ancestry (a fork takes steps 1..K from its parent), header first. */
function fullEvents(b: LoadedBranch, byBranch: ReadonlyMap<string, LoadedBranch>): TraceEvent[] | null {
  const own = branchEvents(b);
  if (b.parentBranch === null || b.forkStep === null) return own;
  const parent = byBranch.get(b.parentBranch);
  if (!parent) return null;
  const parentEvents = fullEvents(parent, byBranch);
  if (!parentEvents) return null;
  return [own[0], ...cutAtStep(parentEvents.slice(1), b.forkStep), ...own.slice(1)];
}

function touchedByPerson(events: readonly TraceEvent[]): boolean {
  return events.some((e) => e.type === 'injected' || e.type === 'override' || e.type === 'human_command');
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
  if (options.format === 'dpo-jsonl') {
    const lines: string[] = [];
    for (const fork of branches) {
      if (fork.parentBranch === null) continue;
      const parent = byBranch.get(fork.parentBranch);
      const pc = checks.get(fork.parentBranch);
      const fc = checks.get(fork.branch);
      const parentEvents = parent ? fullEvents(parent, byBranch) : null;
      if (!parent || !pc || !fc || !parentEvents || !parent.task) {
        skipped.push({ branch: fork.branch, reason: `its parent ${fork.parentBranch} is not in the export` });
        continue;
      }
      if (Math.min(pc.quality, fc.quality) < min && !touchedByPerson(branchEvents(fork))) {
        skipped.push({ branch: fork.branch, reason: `quality below ${min}` });
        continue;
      }
      const pair = preferencePair(
        parent.task,
        {
          branch: parent.branch,
          parentBranch: parent.parentBranch,
          forkStep: parent.forkStep,
          events: redactEvents(parentEvents, r),
          quality: pc.quality,
        },
        {
          branch: fork.branch,
          parentBranch: fork.parentBranch,
          forkStep: fork.forkStep,
          events: redactEvents(branchEvents(fork), r),
          quality: fc.quality,
        },
      );
      if (!pair) {
        skipped.push({
          branch: fork.branch,
          reason: 'no step K+1 on both sides, or no preference between them',
        });
        continue;
      }
      if (
        options.excludeInjected &&
        pair.record.input.messages.some((m) => m.name === 'injected' || m.name === 'human')
      ) {
        skipped.push({
          branch: fork.branch,
          reason: 'its input holds injected content (--exclude-injected)',
        });
        continue;
      }
      lines.push(JSON.stringify(redactValue(pair.record, r)));
      meta.push({
        line: lines.length,
        episode: fork.episode,
        parent: parent.branch,
        fork: fork.branch,
        step: pair.step,
        reason: pair.reason,
        preferred: pair.forkPreferred ? 'fork' : 'parent',
        quality: { parent: pc.quality, fork: fc.quality },
      });
    }
    return { text: lines.map((l) => l + '\n').join(''), meta, count: lines.length, skipped };
  }
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
    // One ATIF trajectory per line: a branch with what it inherited (ATIF-v1.7).
    const lines = chosen.map((c) => JSON.stringify(atifTrajectory(c.events)));
    for (const c of chosen)
      meta.push({
        episode: c.b.episode,
        branch: c.b.branch,
        quality: c.check.quality,
        flags: c.check.flags.map((f) => f.rule),
      });
    return { text: lines.map((l) => l + '\n').join(''), meta, count: lines.length, skipped };
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
