import { parseArgs } from 'node:util';
import { resumeEpisode, resumeStep } from '../engine/harness/resume.js';
import { readLineage } from '../engine/trace/lineage.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';
import { cliEngine } from './episode-cli.js';
import { resolveArg } from './store-common.js';
import { agentFlags, branchOracleOrUsage, EPISODE_FLAGS, runEpisodeCommand } from './run.js';
import { STEP_FLAG_HELP } from './step-repl.js';
import { parseOrUsage } from './parse-or-usage.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';

const HELP = `stepbox resume EPISODE [--step] [--keep] [--json] [--base-url URL] [--temperature T] [--seed N]
                      [--allow-network] [--allow-image] [--allow-limits] [--trust-recorded-task]

Continues an interrupted episode (killed, Ctrl+C, or stopped) from its last complete
step, in a fresh sandbox: that step's snapshot restored, memory and conversation rebuilt
from the trace, the same agent continuing (a scripted agent skips the lines it already
used). The interrupted trace stays as it was; the continuation is a new branch forked at
that step, with "resume_of" in its header.

Options:
${STEP_FLAG_HELP}
  --stop-before tool|answer
                    with --step, also stop inside each step (before its tools run, or
                    before the model's answer reaches the agent) to run, edit or replace it
  --keep            leave the sandbox running at the end and print its id
  --base-url URL, --temperature T, --seed N, --context-policy end|drop_oldest
                    settings of an openai: agent, as for run; by default the recorded
                    endpoint, temperature and seed (never a default endpoint)
${CONSENT_HELP}
  --json            as run, plus parent (the interrupted branch) and fork_step

Exit: 0 succeeded, 1 otherwise, 2 usage (e.g. the episode was not interrupted), 3 no Docker.

Example:
  npx stepbox resume ep-20260101-120000-ab12 --json
`;

/** `stepbox resume` — continue an interrupted episode. */
export const command: CliCommand = {
  name: 'resume',
  summary: 'continue an interrupted episode from its last complete step',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          ...EPISODE_FLAGS,
          ...CONSENT_FLAG_OPTIONS,
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give exactly one EPISODE (an episode or branch id)');
    const engine = cliEngine(io);
    const store = engine.store;
    // The oracle continues only where it has not run yet; refused before Docker, as run refuses it.
    const resumed = resolveArg(store, positionals[0]);
    branchOracleOrUsage(store, resumed.branch, resumeStep(readLineage(store, resumed)), undefined);
    return runEpisodeCommand(
      io,
      engine,
      values,
      (env) =>
        resumeEpisode({
          id: positionals[0],
          ...env,
          agentOptions: agentFlags(values),
          consent: consentFromFlags(values),
        }),
      (c) => {
        const info = store.resolve(c.branch);
        return { parent: info.parentBranch, fork_step: info.forkStep };
      },
    );
  },
};
