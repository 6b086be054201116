import { parseArgs } from 'node:util';
import {
  compareBranches,
  type BranchComparison,
  type ComparedBranch,
} from '../engine/compare/compare-branches.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliError } from './episode-cli.js';
import { parseOrUsage } from './parse-or-usage.js';
import { countOf } from '../../shared/count-of.js';
import { compareVerdict, notReached, notReachedText } from '../../shared/first-difference.js';

const HELP = `stepbox diff A B [--json]

Compares two branches or episodes (ids or unique prefixes) step-aligned: steps are
matched by their decisions, not by index, so a step inserted or dropped in one branch
does not shift everything after it. Each pair is marked same, different_action,
different_result (what the agent saw, overrides and injections included, or what really
happened) or different_files (the workspaces after the step). Prints where the two
first differ (the first step whose action or what the agent saw differs) as the window's
Compare says it ("First difference at step 2 of A: B has no step there. 1 of 3 compared
steps differs."; a step one side has not reached, past its last step, is "not reached in B"
and no difference counted), the files that differ at each differing pair and at the end, and both
sides' status, return (the discounted return), final reward (the verifier's) and QA flags.

Options:
  --json   print {diverged_at, diverged_pair (the index in pairs of that first
           difference: its a_step is null when A has no such step), pairs: [{a_step,
           b_step, verdict, differs (what differs for a different result: "exit 0 vs 1",
           "stdout differs"; for a different action: "tool: execute_shell vs write_file",
           "execute_shell arguments: command differs"), workspace: [{path, status}],
           workspace_verdict (same, differs, only_a, only_b: the other side has no step
           there, unknown: no snapshot)}], files_differ, a: {episode, branch, status,
           end_reason, steps, return, final_reward, flags}, b: {...}}

Exit 0 when the branches do not diverge, 1 when they do.

Examples:
  stepbox diff ep-20260101-120000-ab12 ep-20260101-120000-ab12-f1
  stepbox diff br-main br-fork --json
`;

function side(name: string, o: ComparedBranch): string {
  const num = (x: number | null) => (x === null ? '–' : String(Number(x.toFixed(3))));
  return `${name}: ${o.branch}  ${o.status}${o.end_reason ? ` (${o.end_reason})` : ''}  ${countOf(o.steps, 'step')}  return ${num(o.return)}  final reward ${num(o.final_reward)}  ${countOf(o.flags.length, 'flag')}`;
}

function printHuman(c: BranchComparison, out: NodeJS.WritableStream): void {
  out.write(`${side('A', c.a)}\n${side('B', c.b)}\n`);
  // The window's Compare verdict, with the branches named as the two lines above name them.
  const names = { a: 'A', b: 'B' };
  out.write(`${compareVerdict({ rows: c.pairs, diverged_row: c.diverged_pair }, names).text}\n`);
  const behind = notReached(c.pairs);
  c.pairs.forEach((p, i) => {
    if (p.verdict === 'same') return;
    // A step one side has not reached is no difference: said in the window's words.
    const side = behind[i];
    const verdict = side ? notReachedText(side, names) : p.verdict;
    out.write(
      `  A ${String(p.a_step ?? '–').padStart(4)}  B ${String(p.b_step ?? '–').padStart(4)}  ${verdict}${!side && p.differs.length ? `: ${p.differs.join('; ')}` : ''}${p.workspace.length ? `  ${p.workspace.map((f) => f.path).join(', ')}` : ''}\n`,
    );
  });
  if (c.files_differ.length) out.write(`files that differ at the end: ${c.files_differ.join(', ')}\n`);
  for (const [name, o] of [
    ['A', c.a],
    ['B', c.b],
  ] as const)
    for (const f of o.flags)
      out.write(`  ${name} flag step ${f.step} ${f.severity} ${f.rule}: ${f.message}\n`);
}

/** `stepbox diff` — two branches compared step-aligned. */
export const command: CliCommand = {
  name: 'diff',
  summary: 'compare two branches or episodes step-aligned: verdicts, first divergence, files, rewards, flags',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false } },
        allowPositionals: true,
        strict: true,
      }),
    );
    if (parsed.positionals.length !== 2)
      throw new UsageError('give two EPISODEs or branches: stepbox diff A B');
    const store = cliEngine(io).store;
    const comparison = await compareBranches(store, parsed.positionals[0], parsed.positionals[1]).catch(
      (e: unknown) => {
        throw cliError(e);
      },
    );
    if (parsed.values.json) io.stdout.write(JSON.stringify(comparison, null, 2) + '\n');
    else printHuman(comparison, io.stdout);
    return comparison.diverged_at === null ? EXIT.ok : EXIT.failed;
  },
};
