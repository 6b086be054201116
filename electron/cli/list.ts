import { parseArgs } from 'node:util';
import { candidateName } from '../../shared/candidate-mark.js';
import { formatOutcome, returnValueText, stepsText } from '../../shared/format-outcome.js';
import type { BranchRow } from '../engine/trace/episode-index.js';
import type { CliCommand } from './command.js';
import { unreadableEpisodes } from '../engine/trace/unreadable-episodes.js';
import { EXIT } from './command.js';
import { formatAge, openStoreAndIndex, printJson, table } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { intFlag } from './number-flags.js';

const HELP = `stepbox list [--limit N] [--json]

Lists recent episodes (newest first) and their branches: id, task, status, steps (and
those begun and not finished: waiting while the branch runs, unfinished once it ended),
return (the discounted return: step rewards and the final reward, with its γ), the final reward
(the verifier's), QA flags and age. Any id shown is accepted wherever an EPISODE argument is,
as is a unique prefix of one.

Options:
  --limit N   how many episodes (default 20)
  --json      print {episodes: [{id, task, agent, created, status, steps, unfinished,
              return, gamma, final_reward, flags, branches: [{id, parent, fork_step,
              resume_of, candidate: {number, action} | null, status, end_reason, steps,
              unfinished, return, gamma, final_reward, verifier_success, flags, created,
              ended}]}], unreadable?: [{id, branch, schema, message, file, fix}]}:
              unreadable lists the branches whose traces cannot be read (another
              version's, a damaged line, not a trace file), with what is wrong and the fix

Examples:
  npx stepbox list
  npx stepbox list --limit 5 --json
`;

/**
 * How a branch came about, as `list` says it: `fork @3 of main`, `resumed @3 of main`, and a
 * candidate by the name the window gives it (`candidate 2 · execute_shell ls @3 of main`),
 * so siblings forked at one step can be told apart.
 */
export function branchOrigin(
  b: Pick<BranchRow, 'parent' | 'fork_step' | 'resume_of' | 'candidate'>,
  episode: string,
): string {
  const of = b.parent === episode ? 'main' : b.parent;
  const how = b.candidate ? candidateName(b.candidate) : b.resume_of !== null ? 'resumed' : 'fork';
  return `${how} @${b.fork_step ?? '?'} of ${of}`;
}

function branchJson(b: BranchRow) {
  return {
    id: b.id,
    parent: b.parent,
    fork_step: b.fork_step,
    resume_of: b.resume_of,
    candidate: b.candidate,
    status: b.status,
    end_reason: b.end_reason,
    steps: b.steps,
    unfinished: b.unfinished,
    return: b.return,
    gamma: b.gamma,
    final_reward: b.final_reward,
    verifier_success: b.verifier_success,
    flags: b.flags,
    created: b.created,
    ended: b.ended,
  };
}

/** `stepbox list` — recent episodes and their branches. */
export const command: CliCommand = {
  name: 'list',
  summary: 'list recent episodes and their branches',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { limit: { type: 'string' }, json: { type: 'boolean', default: false } },
      }),
    );
    const limit = intFlag('limit', values.limit, { min: 1 }) ?? 20;
    const { index } = openStoreAndIndex(io);
    const episodes = index.listEpisodes(limit);
    // Branches whose traces cannot be read (another version's, damaged, not a trace): named, not dropped.
    const unreadable = unreadableEpisodes(index);
    index.close();
    if (values.json) {
      printJson(io, {
        episodes: episodes.map((e) => {
          const main = e.branches.find((b) => b.id === e.id) ?? e.branches[0];
          return {
            id: e.id,
            task: e.task,
            agent: e.agent,
            created: e.created,
            status: main?.status ?? null,
            steps: main?.steps ?? 0,
            unfinished: main?.unfinished ?? 0,
            return: main?.return ?? null,
            gamma: main?.gamma ?? null,
            final_reward: main?.final_reward ?? null,
            flags: e.branches.reduce((n, b) => n + b.flags, 0),
            branches: e.branches.map(branchJson),
          };
        }),
        ...(unreadable.length > 0 ? { unreadable } : {}),
      });
      return EXIT.ok;
    }
    // A fork by its own id (accepted wherever an EPISODE is): `stepbox show` on it says the same.
    const other = unreadable
      .map(
        (u) =>
          `${u.branch === u.id ? u.id : `${u.id} / ${u.branch}`}: ${u.message}\n${u.fix ? `  Fix: ${u.fix}\n` : ''}`,
      )
      .join('');
    if (episodes.length === 0 && unreadable.length > 0) {
      io.stdout.write(`No episodes this stepbox can read; in the store:\n${other}`);
      return EXIT.ok;
    }
    if (episodes.length === 0) {
      io.stdout.write(
        'No episodes yet. Run one: npx stepbox run resources/tasks/hello-python --agent scripted:resources/tasks/hello-python/agent.jsonl\n',
      );
      return EXIT.ok;
    }
    const now = Date.now();
    const rows: string[][] = [
      ['EPISODE / BRANCH', 'TASK', 'STATUS', 'STEPS', 'RETURN', 'FINAL', 'FLAGS', 'AGE'],
    ];
    for (const e of episodes)
      for (const b of e.branches) {
        const main = b.id === e.id;
        rows.push([
          main ? b.id : `  └ ${b.id}`,
          main ? e.task : branchOrigin(b, e.id),
          b.end_reason && b.status !== 'succeeded' ? `${b.status} (${b.end_reason})` : b.status,
          // As the window counts them: "2 steps, 1 unfinished".
          stepsText(b.steps, b.unfinished, b.status === 'running'),
          returnValueText(b.return, b.gamma),
          formatOutcome(b.final_reward),
          String(b.flags),
          formatAge(now - (b.ended ?? b.created)),
        ]);
      }
    io.stdout.write(table(rows));
    if (other) io.stdout.write(`\nNot readable by this stepbox:\n${other}`);
    return EXIT.ok;
  },
};
