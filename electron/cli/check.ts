import { parseArgs } from 'node:util';
import { atLeast } from '../../shared/qa/flag.js';
import { checkBranch, recordFlags, type BranchCheck } from '../engine/qa/check-branches.js';
import { loadBranches } from '../engine/qa/episode-set.js';
import { cliEngine } from './episode-cli.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { countOf } from '../../shared/count-of.js';

const HELP = `stepbox check EPISODE|DIR [--json]

Runs the QA rules over episodes and scores them: structure, loop, early_termination,
unverified_success, goal_drift, reward_hacking, memory_corruption, fallback_abuse,
state_leak, efficiency. Thresholds come from each task's "qa" section. The flags are
written to the index (stepbox search --flag RULE finds them).

EPISODE is an episode or branch id (or unique prefix); DIR a batch folder (its
batch.json) or any folder holding trace files.

Options:
  --json   print {episodes: [{episode, branch, quality, flags: [{rule, step, severity,
           message, evidence}]}]}

Exit 0 when no flag is a warning or an error, 1 otherwise.

Examples:
  stepbox check ep-20260101-120000-ab12
  stepbox check ~/.stepbox/batches/b-20260101-1200 --json
`;

/** Renames nested `rule` keys (from recorded arguments or memory values) so only flags carry one. */
function withoutRuleKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRuleKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k === 'rule' ? 'rule_' : k,
      withoutRuleKeys(v),
    ]),
  );
}

function printHuman(checks: readonly BranchCheck[], out: NodeJS.WritableStream): void {
  for (const c of checks) {
    const id = c.branch === c.episode ? c.episode : `${c.episode}/${c.branch}`;
    out.write(
      `${id}  quality ${c.quality.toFixed(2)}  ${c.flags.length ? countOf(c.flags.length, 'flag') : 'clean'}\n`,
    );
    for (const f of c.flags)
      out.write(`  step ${String(f.step).padStart(3)}  ${f.severity.padEnd(7)}  ${f.rule}: ${f.message}\n`);
  }
}

/** `stepbox check` — QA flags and a quality score per episode. */
export const command: CliCommand = {
  name: 'check',
  summary: 'run the QA rules over episodes: flags and a quality score',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
      }),
    );
    if (parsed.positionals.length !== 1) throw new UsageError('expected one EPISODE or DIR');
    const engine = cliEngine(io);
    const store = engine.store;
    // An unknown id is a usage error (2), a damaged trace an infrastructure one (3, with
    // its fix): main's error report says so; exit 1 is kept for flagged episodes.
    const branches = loadBranches(parsed.positionals[0], engine, { allBranches: false });
    if (branches.length === 0) throw new UsageError(`no traces found in ${parsed.positionals[0]}`);
    const checks: BranchCheck[] = [];
    for (const b of branches) checks.push(await checkBranch(b, store));
    recordFlags(engine.index(), checks);
    if (parsed.values.json) {
      const episodes = checks.map((c) => ({
        episode: c.episode,
        branch: c.branch,
        quality: c.quality,
        flags: c.flags.map((f) => ({ ...f, evidence: withoutRuleKeys(f.evidence) })),
      }));
      io.stdout.write(JSON.stringify({ episodes }, null, 2) + '\n');
    } else printHuman(checks, io.stdout);
    return checks.some((c) => c.flags.some((f) => atLeast(f.severity, 'warning'))) ? EXIT.failed : EXIT.ok;
  },
};
