import { parseArgs } from 'node:util';
import { forkEpisode } from '../engine/harness/fork.js';
import { parseBreakFlags } from './breakpoint-flags.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';
import { cliEngine } from './episode-cli.js';
import { intFlag } from './number-flags.js';
import { resolveArg } from './store-common.js';
import { agentFlags, branchOracleOrUsage, EPISODE_FLAGS, runEpisodeCommand } from './run.js';
import { STEP_FLAG_HELP } from './step-repl.js';
import { parseOrUsage } from './parse-or-usage.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';

const HELP = `stepbox fork EPISODE --at K [--agent SPEC] [--model SOURCE] [--step] [--keep] [--json]
                    [--base-url URL] [--temperature T] [--seed N] [--context-policy P]
                    [--allow-network] [--allow-image] [--allow-limits] [--trust-recorded-task]

Forks EPISODE (an episode or branch id, or a unique prefix) at step K into a new branch
with its own id and trace, and runs it: steps 1..K are taken from the parent (snapshot
K restored in a fresh sandbox, never re-executed); the agent's first decision is step
K+1. A scripted: file given with --agent starts at its first line; without --agent
the parent's agent continues (a scripted parent: the lines after the first K).

Options:
  --at K            the fork step (0..the parent's last complete step)
  --agent SPEC      scripted:FILE, replay:EPISODE, openai:MODEL@URL, manual or
                    exec:CMD; without it an exec: branch runs its recorded command
                    again (an episode imported from a bundle needs it given); the new
                    process is fast-forwarded through steps 1..K from the recording and
                    stops as diverged if it asks something else
  --model SOURCE    a new model source for an exec: agent, answering from step K+1
                    (default: the recorded source, after its first K answers)
${STEP_FLAG_HELP}
  --stop-before tool|answer
                    with --step, also stop inside each step (before its tools run, or
                    before the model's answer reaches the agent) to run, edit or replace it
  --keep            leave the sandbox running at the end and print its id
  --base-url URL, --temperature T, --seed N, --context-policy end|drop_oldest
                    settings of an openai: agent, as for run; an openai: parent's
                    recorded endpoint, temperature and seed are kept unless given
${CONSENT_HELP}
  --json            as run (episode, branch, status, end_reason, steps, verifier, trace,
                    return, final_reward) plus parent (the parent branch id) and fork_step

Exit: 0 succeeded, 1 otherwise, 2 usage, 3 no Docker or image.

Examples:
  npx stepbox fork ep-20260101-120000-ab12 --at 3 --agent scripted:other.jsonl --json
  npx stepbox fork ep-20260101-120000-ab12 --at 2 --step
  npx stepbox fork ep-20260101-120000-ab12 --at 2 --model scripted:other.jsonl   # an exec: episode
`;

/** `stepbox fork` — a new branch from step K of an episode. */
export const command: CliCommand = {
  name: 'fork',
  summary: 'fork an episode at step K into a new branch and run it',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          at: { type: 'string' },
          agent: { type: 'string' },
          ...EPISODE_FLAGS,
          ...CONSENT_FLAG_OPTIONS,
          break: { type: 'string', multiple: true, default: [] },
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give exactly one EPISODE (an episode or branch id)');
    const at = intFlag('at', values.at);
    if (at === undefined) throw new UsageError('--at K is required: the step to fork at');
    const engine = cliEngine(io);
    const store = engine.store;
    const parent = resolveArg(store, positionals[0]).branch;
    branchOracleOrUsage(store, parent, at, values.agent);
    return runEpisodeCommand(
      io,
      engine,
      values,
      (env) =>
        forkEpisode({
          id: parent,
          at,
          agentSpec: values.agent,
          ...env,
          breakpoints: parseBreakFlags(values.break ?? []),
          agentOptions: agentFlags(values),
          consent: consentFromFlags(values),
        }),
      () => ({ parent, fork_step: at }),
    );
  },
};
