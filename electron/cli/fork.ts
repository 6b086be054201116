import { parseArgs } from 'node:util';
import { forkEpisode } from '../engine/harness/fork.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import { parseBreakFlags } from './breakpoint-flags.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';
import {
  cliError,
  cliProvider,
  cliStore,
  closeOnSignals,
  exitKeepingSandbox,
  contextPolicyFlag,
  intFlag,
  numberFlag,
} from './episode-cli.js';
import { drive } from './run.js';
import { STEP_KEYS } from './step-repl.js';
import { parseOrUsage } from './parse-or-usage.js';

const HELP = `stepbox fork EPISODE --at K [--agent SPEC] [--step] [--keep] [--json]
                    [--base-url URL] [--temperature T] [--seed N] [--context-policy P]

Forks EPISODE (an episode or branch id, or a unique prefix) at step K into a new branch
with its own id and trace, and runs it: steps 1..K are taken from the parent (snapshot
K restored in a fresh sandbox, never re-executed); the agent's first decision is step
K+1. A scripted: file given with --agent starts at its first line; without --agent
the parent's agent continues (a scripted parent: the lines after the first K).

Options:
  --at K            the fork step (0..the parent's last complete step)
  --agent SPEC      scripted:FILE, replay:EPISODE, openai:MODEL or manual
  --step            step in the terminal: ${STEP_KEYS}
  --keep            leave the sandbox running at the end and print its id
  --base-url URL, --temperature T, --seed N, --context-policy end|drop_oldest
                    settings of an openai: agent, as for run
  --json            as run (episode, branch, status, end_reason, steps, verifier, trace,
                    return) plus parent (the parent branch id) and fork_step

Exit: 0 succeeded, 1 otherwise, 2 usage, 3 no Docker or image.

Examples:
  npx stepbox fork ep-20260101-120000-ab12 --at 3 --agent scripted:other.jsonl --json
  npx stepbox fork ep-20260101-120000-ab12 --at 2 --step
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
          step: { type: 'boolean', default: false },
          keep: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
          break: { type: 'string', multiple: true, default: [] },
          'base-url': { type: 'string' },
          temperature: { type: 'string' },
          seed: { type: 'string' },
          'context-policy': { type: 'string' },
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give exactly one EPISODE (an episode or branch id)');
    const at = intFlag('at', values.at);
    if (at === undefined) throw new UsageError('--at K is required: the step to fork at');
    const store = cliStore(io);
    const parent = (() => {
      try {
        return store.resolve(positionals[0]).branch;
      } catch (e) {
        throw cliError(e);
      }
    })();
    const provider = await cliProvider();
    let controller: EpisodeRunner | null = null;
    const uninstall = closeOnSignals(io, () => controller, provider);
    try {
      controller = await forkEpisode({
        id: parent,
        at,
        agentSpec: values.agent,
        store,
        provider,
        breakpoints: parseBreakFlags(values.break ?? []),
        agentOptions: {
          baseUrl: values['base-url'],
          temperature: numberFlag('temperature', values.temperature),
          seed: intFlag('seed', values.seed),
          contextPolicy: contextPolicyFlag(values['context-policy']),
        },
      }).catch((e: unknown) => {
        throw cliError(e);
      });
      const code = await drive(controller, io, store, {
        step: values.step,
        keep: values.keep,
        json: values.json,
        extra: { parent, fork_step: at },
      });
      if (values.keep) await exitKeepingSandbox(io, code);
      return code;
    } finally {
      uninstall();
      if (!values.keep) await provider.close();
    }
  },
};
