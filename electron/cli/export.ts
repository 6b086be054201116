import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkBranch, type BranchCheck } from '../engine/qa/check-branches.js';
import { loadBranches } from '../engine/qa/episode-set.js';
import { buildExport, EXPORT_FORMATS, type ExportFormat } from '../engine/export/run-export.js';
import { parseRedactions } from '../engine/export/redact.js';
import { readChoices, type Choice } from '../engine/candidates/choice-log.js';
import type { LoadedBranch } from '../engine/qa/episode-set.js';
import type { DiskEpisodeStore } from '../engine/trace/episode-store.js';
import { cliEngine, cliError } from './episode-cli.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { numberFlag } from './number-flags.js';

const HELP = `stepbox export DIR|EPISODE --format openai-jsonl|otel-json|dpo-jsonl|atif [--out FILE]
               [--min-quality Q] [--exclude-injected] [--include-failed] [--jsonl]
               [--redact FIELD|/regex/ ...] [--json]

Turns episodes (a batch folder, a folder of traces, or an episode id with its branches)
into training or observability data:
  openai-jsonl  OpenAI chat fine-tuning JSONL: messages with tool_calls (arguments as
                strings, every call answered by a tool message), assistant turns weighted
                1, or 0 where a QA warning/error points at their step; only episodes that
                succeeded (--include-failed keeps the others); quality, flags and
                person-made messages in FILE's sidecar *.meta.jsonl
  otel-json     OTLP/JSON traces with OTel GenAI spans: invoke_agent -> chat ->
                execute_tool (gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.usage.*)
  dpo-jsonl     OpenAI preference pairs (input, preferred_output, non_preferred_output):
                one per choice among candidates (stepbox candidates --pick, or the
                window's Pick), the chosen step preferred; and one per corrected fork (a
                person's terminal edit, injection, override or manual decision before its
                first step, followed by a different decision than the parent's), the fork
                preferred. Never a pair whose sides decide the same; a read-only terminal
                peek is no correction and a resumed branch no fork. The sidecar names
                each pair's episode, step, branches and why
  atif          ATIF-v1.7 trajectories (Harbor / Terminal-Bench): the goal, then per step
                the model's message, its tool calls and what the agent was shown; status,
                verifier and real results behind overrides in "extra". One branch → ONE
                JSON document (what Harbor reads as trajectory.json); several branches
                (a folder, an episode with forks) → a folder with one <branch>.json per
                trajectory; --jsonl → one trajectory per line in one file instead
                (stepbox import-atif reads all three back)
Injected and human-typed content is labelled (name "injected" on the message; the
sidecar lists overridden tool results); --exclude-injected leaves such episodes out.

Options:
  --out FILE          where to write (default ./<DIR name>.<format>.jsonl|json; for atif
                      with several branches a folder, default ./<DIR name>.atif/)
  --jsonl             atif: every trajectory as a line of one JSONL file
  --min-quality Q     keep episodes with QA quality >= Q (0..1)
  --exclude-injected  leave out episodes with injected or human-typed content
  --include-failed    openai-jsonl: also export episodes that failed, timed out, ended
                      in error, were interrupted or are still running
  --redact X          a field name (its values become [REDACTED]), /regex/flags
                      (matches become [REDACTED]), or @secrets (API keys, tokens,
                      password=… values); repeatable
  --json              print {out, meta, count, skipped} on stdout

Examples:
  stepbox export ~/.stepbox/batches/b-20260101-1200 --format openai-jsonl --min-quality 0.8
  stepbox export ep-20260101-120000-ab12 --format atif --out trajectory.json
  stepbox export ~/.stepbox/batches/b-20260101-1200 --format atif --out trajectories/
  stepbox export ep-20260101-120000-ab12 --format dpo-jsonl --redact api_key --redact '/sk-[A-Za-z0-9]+/'
`;

/** The choices among candidates recorded for the exported episodes (in their own stores). */
function choicesOf(branches: readonly LoadedBranch[], store: DiskEpisodeStore): Choice[] {
  const seen = new Set<string>();
  const out: Choice[] = [];
  for (const b of branches) {
    if (seen.has(b.episode)) continue;
    seen.add(b.episode);
    try {
      out.push(...readChoices(b.store ?? store, b.episode));
    } catch {
      // An episode read from a folder of traces outside a store has no choice log.
    }
  }
  return out;
}

/** `stepbox export` — fine-tuning JSONL, OTLP JSON spans or preference pairs. */
export const command: CliCommand = {
  name: 'export',
  summary: 'export episodes as OpenAI fine-tuning JSONL, OTLP JSON spans or preference pairs',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          format: { type: 'string' },
          out: { type: 'string' },
          'min-quality': { type: 'string' },
          'exclude-injected': { type: 'boolean', default: false },
          'include-failed': { type: 'boolean', default: false },
          redact: { type: 'string', multiple: true, default: [] },
          jsonl: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('expected one DIR or EPISODE');
    const format = values.format as ExportFormat | undefined;
    if (!format || !EXPORT_FORMATS.includes(format))
      throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
    if (values.jsonl && format !== 'atif')
      throw new UsageError(`--jsonl applies to --format atif; ${format} has one layout`);
    const minQuality = numberFlag('min-quality', values['min-quality'], { min: 0, max: 1 });
    let redaction;
    try {
      redaction = parseRedactions(values.redact ?? []);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const engine = cliEngine(io);
    const store = engine.store;
    let branches;
    try {
      branches = loadBranches(positionals[0], engine, { allBranches: true });
    } catch (e) {
      throw cliError(e);
    }
    const checks = new Map<string, BranchCheck>();
    for (const b of branches) checks.set(b.branch, await checkBranch(b, store));
    const choices = format === 'dpo-jsonl' ? choicesOf(branches, store) : [];
    const result = buildExport(branches, checks, {
      format,
      choices,
      minQuality,
      excludeInjected: values['exclude-injected'],
      includeFailed: values['include-failed'],
      redaction,
    });
    const name = basename(resolve(positionals[0]));
    if (format === 'atif' && !values.jsonl && result.documents) {
      const written = writeAtifDocuments(result.documents, values.out, name);
      const metaPath = `${written.out.replace(/\.json$/, '')}.meta.jsonl`;
      writeFileSync(metaPath, result.meta.map((m) => JSON.stringify(m) + '\n').join(''));
      for (const s of result.skipped) io.stderr.write(`skipped ${s.branch}: ${s.reason}\n`);
      if (values.json)
        io.stdout.write(
          JSON.stringify(
            {
              out: written.out,
              meta: metaPath,
              count: result.count,
              skipped: result.skipped,
              files: written.files,
            },
            null,
            2,
          ) + '\n',
        );
      else
        io.stdout.write(
          `wrote ${result.count} atif trajectory document(s) to ${written.out} (sidecar ${metaPath})\n`,
        );
      return EXIT.ok;
    }
    const ext = format === 'otel-json' ? 'json' : 'jsonl';
    const out = resolve(values.out ?? `${name}.${format.replace(/-json(l)?$/, '')}.${ext}`);
    const metaPath = out.replace(/\.(jsonl|json)$/, '') + '.meta.jsonl';
    writeFileSync(out, result.text);
    writeFileSync(metaPath, result.meta.map((m) => JSON.stringify(m) + '\n').join(''));
    for (const s of result.skipped) io.stderr.write(`skipped ${s.branch}: ${s.reason}\n`);
    if (values.json)
      io.stdout.write(
        JSON.stringify({ out, meta: metaPath, count: result.count, skipped: result.skipped }, null, 2) + '\n',
      );
    else io.stdout.write(`wrote ${result.count} ${format} record(s) to ${out} (sidecar ${metaPath})\n`);
    return EXIT.ok;
  },
};

/**
 * Writes ATIF documents as Harbor reads them: one trajectory → that one JSON document at
 * `out` (default `<name>.atif.json`); several → a folder `out` (default `<name>.atif/`)
 * with one `<branch>.json` each. A file where a folder is needed is a usage error.
 */
function writeAtifDocuments(
  documents: readonly { name: string; text: string }[],
  outOption: string | undefined,
  name: string,
): { out: string; files: string[] } {
  if (documents.length === 1) {
    const out = resolve(outOption ?? `${name}.atif.json`);
    if (existsSync(out) && statSync(out).isDirectory()) {
      const file = join(out, 'trajectory.json');
      writeFileSync(file, documents[0].text);
      return { out: file, files: [file] };
    }
    writeFileSync(out, documents[0].text);
    return { out, files: [out] };
  }
  const dir = resolve(outOption ?? `${name}.atif`);
  if (/\.jsonl?$/.test(dir) || (existsSync(dir) && !statSync(dir).isDirectory()))
    throw new UsageError(
      `${documents.length} trajectories are written one file each into a folder, and --out ${outOption} is a file; name a folder, or pass --jsonl for one JSONL file`,
    );
  mkdirSync(dir, { recursive: true });
  const files = documents.map((d) => {
    const file = join(dir, d.name);
    writeFileSync(file, d.text);
    return file;
  });
  return { out: dir, files };
}
