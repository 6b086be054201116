import { readdir } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchSection, BenchValue } from '../bench/bench-section.js';
import { untilQuiet, type QuietStart } from '../bench/quiet-machine.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';

/** The JSON document of `stepbox bench --json`: every section's keys at the top level, once. */
export interface BenchReport {
  [key: string]:
    BenchValue | readonly string[] | readonly { section: string; reason: string }[] | readonly QuietStart[];
  /** Sections that ran, in order. */
  sections: string[];
  skipped: { section: string; reason: string }[];
  /** Sections that threw, with why. */
  failed: { section: string; reason: string }[];
  /** How busy the machine was as each section started (each waits for a settled machine). */
  started_on: QuietStart[];
}

/** Keys the runner itself writes; a section must not use them. */
const RESERVED = new Set(['sections', 'skipped', 'failed', 'started_on', 'bench_ms']);

/**
 * Rounds a measurement for display without ever turning a small float into 0: four
 * significant digits for non-integers, integers unchanged.
 */
export function roundMeasurement(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return value;
  return Number(value.toPrecision(4));
}

/**
 * Adds one section's results to the report; a key another section already wrote is kept
 * under `section.key` so that no documented key appears twice.
 */
export function mergeSection(
  report: BenchReport,
  section: string,
  values: Readonly<Record<string, BenchValue>>,
  warn: (message: string) => void,
): void {
  for (const [key, value] of Object.entries(values)) {
    const target = key in report || RESERVED.has(key) ? `${section}.${key}` : key;
    if (target !== key) warn(`bench: section ${section} repeats key ${key}; reported as ${target}`);
    report[target] = typeof value === 'number' ? roundMeasurement(value) : value;
  }
}

/** The sections found, and the files that would not load (named by file stem) with why. */
export interface LoadedSections {
  readonly sections: BenchSection[];
  readonly broken: { section: string; reason: string }[];
}

/** Loads every section file next to bench-section.js, sorted by name; one that fails to load is reported, not fatal. */
export async function loadSections(): Promise<LoadedSections> {
  const dir = new URL('../bench/', import.meta.url);
  const files = (await readdir(fileURLToPath(dir)))
    .filter((f) => /\.(js|ts)$/.test(f) && !f.endsWith('.d.ts') && !/^bench-section\./.test(f))
    .sort();
  const sections: BenchSection[] = [];
  const broken: { section: string; reason: string }[] = [];
  for (const file of files) {
    try {
      const mod = (await import(pathToFileURL(fileURLToPath(new URL(file, dir))).href)) as {
        section?: BenchSection;
      };
      if (mod.section) sections.push(mod.section);
    } catch (e) {
      broken.push({
        section: file.replace(/\.(js|ts)$/, ''),
        reason: `cannot load: ${(e as Error).message}`,
      });
    }
  }
  return { sections, broken };
}

const HELP = `stepbox bench [--json] [--only SECTION]

Runs the benchmark sections (sandbox, and whatever else this build has) and prints
medians. Every section's keys appear once at the top level of --json, next to
"sections" (ran), "skipped" ([{section, reason}]: prerequisite missing), "failed" and
"started_on" (each section waits, up to 15 s, for the machine to be under 15 % busy, and
says how busy it was).
Exit 0 when every section that ran finished, 1 otherwise.

Options:
  --json            one JSON document on stdout; progress on stderr
  --only SECTION    run one section

Examples:
  npm run bench                            (= stepbox bench --json)
  stepbox bench --json --only sandbox
`;

/** `stepbox bench` — runs the benchmark sections and prints their medians. */
export const command: CliCommand = {
  name: 'bench',
  summary: 'measure sandbox, harness and UI speed (medians; --json)',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false }, only: { type: 'string' } },
        strict: true,
        allowPositionals: false,
      }),
    );
    const { json, only } = parsed.values;
    const { sections: all, broken } = await loadSections();
    const chosen = only ? all.filter((s) => s.name === only) : all;
    const brokenChosen = only ? broken.filter((b) => b.section === only) : broken;
    if (only && chosen.length === 0 && brokenChosen.length === 0)
      throw new UsageError(
        `no section "${only}"; sections: ${[...all.map((s) => s.name), ...broken.map((b) => b.section)].join(', ')}`,
      );

    const progress = (m: string) => io.stderr.write(`[bench] ${m}\n`);
    const started = performance.now();
    const report: BenchReport = { sections: [], skipped: [], failed: [...brokenChosen], started_on: [] };
    for (const b of brokenChosen) progress(`${b.section}: FAILED — ${b.reason}`);
    for (const section of chosen) {
      const missing = await section
        .prerequisite()
        .catch((e: Error) => `prerequisite check failed: ${e.message}`);
      if (missing !== null) {
        progress(`${section.name}: skipped — ${missing}`);
        report.skipped.push({ section: section.name, reason: missing });
        continue;
      }
      const start = await untilQuiet(section.name);
      report.started_on.push(start);
      progress(
        `${section.name}: running (machine ${start.busy_pct}% busy${start.quiet ? '' : `, still after ${start.waited_ms} ms: measured anyway`})`,
      );
      const t0 = performance.now();
      try {
        const values = await section.run((m) => progress(`${section.name}: ${m}`));
        mergeSection(report, section.name, values, progress);
        report.sections.push(section.name);
        progress(`${section.name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        progress(`${section.name}: FAILED — ${reason}`);
        report.failed.push({ section: section.name, reason });
      }
    }
    report.bench_ms = Math.round(performance.now() - started);

    if (json) io.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else {
      const width = Math.max(...Object.keys(report).map((k) => k.length));
      for (const [key, value] of Object.entries(report)) {
        if (key === 'sections' || key === 'skipped' || key === 'failed' || key === 'started_on') continue;
        io.stdout.write(`${key.padEnd(width)}  ${String(value)}\n`);
      }
      for (const s of report.skipped) io.stdout.write(`skipped ${s.section}: ${s.reason}\n`);
      for (const s of report.failed) io.stdout.write(`FAILED ${s.section}: ${s.reason}\n`);
    }
    return report.failed.length ? EXIT.failed : EXIT.ok;
  },
};
