import { atLeast, type Flag } from '../../../shared/qa/flag.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { branchEvents, type BranchCheck } from '../qa/check-branches.js';
import type { LoadedBranch } from '../qa/episode-set.js';
import { summarizeSteps } from '../../../shared/step-summary.js';
import { barChart, esc, histogram, lineChart } from './svg-charts.js';

/** One episode's numbers, as the report aggregates them. */
export interface ReportRow {
  readonly episode: string;
  readonly branch: string;
  readonly task: string;
  readonly status: string;
  readonly steps: number;
  readonly durationMs: number;
  readonly quality: number;
  readonly flags: readonly Flag[];
  readonly rewardCurve: [number, number][];
}

/** The report's aggregate numbers (also what tests check). */
export interface ReportSummary {
  readonly episodes: number;
  readonly succeeded: number;
  readonly successRate: number;
  readonly flagCounts: Record<string, number>;
  /** Root-cause rule → episodes it explains. */
  readonly failureGroups: Record<string, string[]>;
}

/** A branch's report row from its trace and QA verdict. */
export function reportRow(b: LoadedBranch, check: BranchCheck): ReportRow {
  const events = branchEvents(b);
  const steps = events.filter((e) => e.type === 'action' || e.type === 'parse_error').map((e) => e.step);
  const end = b.trace.end;
  let total = 0;
  const curve: [number, number][] = [[b.forkStep ?? 0, 0]];
  for (const e of events)
    if (e.type === 'reward') {
      total += e.total;
      curve.push([e.step, total]);
    }
  return {
    episode: b.episode,
    branch: b.branch,
    task: b.task?.name ?? String(b.trace.header.task.name ?? '?'),
    status: end?.status ?? 'open',
    steps: new Set(steps).size,
    durationMs: (end ?? events[events.length - 1]).t - b.trace.header.t,
    quality: check.quality,
    flags: check.flags,
    rewardCurve: curve.length > 1 ? curve : [],
  };
}

/** The flag that best explains an episode: its first error, else its first warning. */
export function rootCause(flags: readonly Flag[]): Flag | null {
  return flags.find((f) => f.severity === 'error') ?? flags.find((f) => f.severity === 'warning') ?? null;
}

/** Aggregates rows into the report's headline numbers. */
export function summarize(rows: readonly ReportRow[]): ReportSummary {
  const succeeded = rows.filter((r) => r.status === 'succeeded').length;
  const flagCounts: Record<string, number> = {};
  const failureGroups: Record<string, string[]> = {};
  for (const r of rows) {
    for (const f of r.flags) flagCounts[f.rule] = (flagCounts[f.rule] ?? 0) + 1;
    const cause = rootCause(r.flags);
    if (r.status !== 'succeeded' || cause) {
      const key = cause?.rule ?? `status:${r.status}`;
      (failureGroups[key] ??= []).push(r.branch);
    }
  }
  return {
    episodes: rows.length,
    succeeded,
    successRate: rows.length ? succeeded / rows.length : 0,
    flagCounts,
    failureGroups,
  };
}

function stepsShowing(events: readonly TraceEvent[], flag: Flag): string {
  const evSteps = Array.isArray(flag.evidence.steps) ? (flag.evidence.steps as number[]) : [flag.step];
  const wanted = new Set(evSteps.slice(0, 6));
  const rows = summarizeSteps(events)
    .filter((s) => wanted.has(s.step))
    .map((s) => {
      const res = s.results
        .map((r) =>
          r.ok ? `exit ${r.exit_code ?? 0}${r.fallback ? ' (fallback)' : ''}` : `error ${r.error_code}`,
        )
        .join(', ');
      return `<tr><td>${s.step}</td><td><code>${esc(s.action)}</code></td><td>${esc(res)}</td><td>${s.changed ?? ''}</td></tr>`;
    })
    .join('');
  return rows
    ? `<table class="steps"><tr><th>step</th><th>action</th><th>result</th><th>files changed</th></tr>${rows}</table>`
    : '';
}

const CSS = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
.kpi{display:inline-block;margin:0 28px 12px 0}.kpi b{display:block;font-size:26px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
.charts svg{margin:0 18px 12px 0;background:#fafbfc;border:1px solid #eee}
.bar{fill:#4f7cac}.axis{stroke:#888}.title{font-size:12px;font-weight:600}.lbl,.n{font-size:9px;text-anchor:middle;fill:#555}
.line{fill:none;stroke-width:1.5;opacity:.8}.c0{stroke:#4f7cac}.c1{stroke:#c0504d}.c2{stroke:#9bbb59}.c3{stroke:#8064a2}
.c4{stroke:#4bacc6}.c5{stroke:#f79646}.c6{stroke:#2c4d75}.c7{stroke:#772c2a}
.error{color:#b00020}.warning{color:#a05a00}.muted{color:#777}code{font-size:12px}details{margin:6px 0}`;

/**
 * One self-contained HTML file (inline CSS and SVG, no script, no URL): success rate,
 * flag counts, quality histogram, step and duration distributions, reward curves, and
 * failures grouped by root-cause flag with the steps that show it.
 */
export function renderReport(
  title: string,
  branches: readonly LoadedBranch[],
  checks: ReadonlyMap<string, BranchCheck>,
): { html: string; summary: ReportSummary } {
  const pairs = branches.flatMap((b) => {
    const c = checks.get(b.branch);
    return c ? [{ b, row: reportRow(b, c) }] : [];
  });
  const rows = pairs.map((p) => p.row);
  const summary = summarize(rows);
  const byStatus: Record<string, number> = {};
  for (const r of rows) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  const qBins = histogram(
    rows.map((r) => r.quality),
    10,
    0,
    1,
  );
  const qLabels = qBins.map((_, i) => (i / 10).toFixed(1));
  const maxSteps = Math.max(1, ...rows.map((r) => r.steps));
  const sBinCount = Math.min(12, maxSteps + 1);
  const sBins = histogram(
    rows.map((r) => r.steps),
    sBinCount,
    0,
    maxSteps + 1,
  );
  const sLabels = sBins.map((_, i) => String(Math.floor((i * (maxSteps + 1)) / sBinCount)));
  const maxDur = Math.max(1, ...rows.map((r) => r.durationMs / 1000));
  const dBins = histogram(
    rows.map((r) => r.durationMs / 1000),
    10,
    0,
    maxDur,
  );
  const dLabels = dBins.map((_, i) => `${((i * maxDur) / 10).toFixed(maxDur < 10 ? 1 : 0)}s`);
  const flagRows = Object.entries(summary.flagCounts)
    .sort((a, b) => b[1] - a[1])
    .map(([rule, n]) => {
      const sev = rows.flatMap((r) => r.flags.filter((f) => f.rule === rule).map((f) => f.severity));
      const worst = sev.includes('error') ? 'error' : sev.includes('warning') ? 'warning' : 'info';
      return `<tr><td class="${worst}">${esc(rule)}</td><td>${n}</td><td>${esc(worst)}</td></tr>`;
    })
    .join('');
  const groups = Object.entries(summary.failureGroups)
    .sort((a, b) => b[1].length - a[1].length)
    .map(([cause, ids]) => {
      const items = ids
        .map((id) => {
          const p = pairs.find((x) => x.b.branch === id)!;
          const f = rootCause(p.row.flags);
          const events = branchEvents(p.b);
          return `<details><summary><code>${esc(id)}</code> (${esc(p.row.task)}, ${esc(p.row.status)}, quality ${p.row.quality.toFixed(2)})${
            f ? ` — step ${f.step}: <span class="${f.severity}">${esc(f.message)}</span>` : ''
          }</summary>${f ? stepsShowing(events, f) : `<p class="muted">No flag: ${esc(p.b.trace.end?.end_reason ?? 'unclosed')}</p>`}</details>`;
        })
        .join('');
      return `<h3>${esc(cause)} <span class="muted">(${ids.length})</span></h3>${items}`;
    })
    .join('');
  const episodes = rows
    .map(
      (r) =>
        `<tr><td><code>${esc(r.branch)}</code></td><td>${esc(r.task)}</td><td>${esc(r.status)}</td><td>${r.steps}</td><td>${(r.durationMs / 1000).toFixed(1)}s</td><td>${r.quality.toFixed(2)}</td><td>${esc(
          r.flags
            .filter((f) => atLeast(f.severity, 'warning'))
            .map((f) => `${f.rule}@${f.step}`)
            .join(', '),
        )}</td></tr>`,
    )
    .join('');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>${CSS}</style></head><body>
<h1>${esc(title)}</h1>
<div class="kpi"><b id="success-rate">${(summary.successRate * 100).toFixed(1)}%</b>success rate (${summary.succeeded}/${summary.episodes})</div>
${Object.entries(byStatus)
  .map(([s, n]) => `<div class="kpi"><b>${n}</b>${esc(s)}</div>`)
  .join('')}
<h2>Flags</h2>${flagRows ? `<table id="flag-counts"><tr><th>rule</th><th>flags</th><th>worst</th></tr>${flagRows}</table>` : '<p>No flags.</p>'}
<h2>Distributions</h2><div class="charts">${barChart(qLabels, qBins, 'quality')}${barChart(sLabels, sBins, 'steps per episode')}${barChart(dLabels, dBins, 'duration')}</div>
<h2>Reward curves</h2><div class="charts">${lineChart(
    rows.filter((r) => r.rewardCurve.length).map((r) => ({ name: r.branch, points: r.rewardCurve })),
    'cumulative reward by step',
  )}</div>
<h2>Failures by root cause</h2>${groups || '<p>None.</p>'}
<h2>Episodes</h2><table><tr><th>episode</th><th>task</th><th>status</th><th>steps</th><th>duration</th><th>quality</th><th>flags</th></tr>${episodes}</table>
</body></html>
`;
  return { html, summary };
}
