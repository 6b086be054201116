import { writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkBranch, type BranchCheck } from '../engine/qa/check-branches.js';
import { loadBranches } from '../engine/qa/episode-set.js';
import { renderReport } from '../engine/report/html-report.js';
import { cliEngine, cliError } from './episode-cli.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';

const HELP = `stepbox report DIR --out FILE.html [--json]

Writes one self-contained HTML file (inline CSS and SVG, no scripts, no URLs; opens
offline) about a batch folder or a folder of traces: success rate, QA flag counts, the
quality histogram, step and duration distributions, reward curves, and failures grouped
by their root-cause flag with the steps that show it.

Options:
  --out FILE   the HTML file to write (required)
  --json       print {out, episodes, success_rate, flag_counts} on stdout

Example:
  stepbox report ~/.stepbox/batches/b-20260101-1200 --out report.html
`;

/** `stepbox report` — a self-contained HTML report of a batch. */
export const command: CliCommand = {
  name: 'report',
  summary: 'write a self-contained HTML report of a batch: success, flags, distributions',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: { out: { type: 'string' }, json: { type: 'boolean', default: false } },
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('expected one DIR');
    if (!values.out) throw new UsageError('--out FILE.html is required');
    const engine = cliEngine(io);
    const store = engine.store;
    let branches;
    try {
      branches = loadBranches(positionals[0], engine);
    } catch (e) {
      throw cliError(e);
    }
    if (branches.length === 0) throw new UsageError(`no traces found in ${positionals[0]}`);
    const checks = new Map<string, BranchCheck>();
    for (const b of branches) checks.set(b.branch, await checkBranch(b, store));
    const { html, summary } = renderReport(
      `stepbox report: ${basename(resolve(positionals[0]))}`,
      branches,
      checks,
    );
    const out = resolve(values.out);
    writeFileSync(out, html);
    if (values.json)
      io.stdout.write(
        JSON.stringify(
          {
            out,
            episodes: summary.episodes,
            success_rate: summary.successRate,
            flag_counts: summary.flagCounts,
          },
          null,
          2,
        ) + '\n',
      );
    else
      io.stdout.write(
        `wrote ${out}: ${summary.episodes} episode(s), ${(summary.successRate * 100).toFixed(1)}% succeeded\n`,
      );
    return EXIT.ok;
  },
};
