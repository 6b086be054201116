import { join } from 'node:path';
import { caseFromEpisode } from '../engine/cases/case-from-episode.js';
import { CaseError } from '../engine/cases/case-library.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine } from './episode-cli.js';
import { parseOneArg } from './parse-or-usage.js';
import { printJson, resolveArg } from './store-common.js';
import { countOf } from '../../shared/count-of.js';

const HELP = `stepbox case new EPISODE [--branch B] --name NAME [--force] [--json]

Saves a recorded episode (or one of its branches) as a case in the store's case library
($STEPBOX_HOME/cases/NAME): its task, the answers the agent got at each step as a scripted
agent (agent.jsonl; for an exec: agent also agent.json with its command and the program
files of its task folder), the QA rules it raised at warning or worse (expected.json), and
a walkthrough skeleton (README.md) pointing at the flagged steps for you to finish. From
then on case list, case run, case verify and the window treat it like a bundled case;
add fixed/agent.jsonl or fixed/task.json for its fix, and share it with case export.

Options:
  --branch B   the branch to save (default: the episode's own)
  --name NAME  the case's name: lowercase letters, digits and -
  --force      replace a library case of that name
  --json       print {name, dir, episode, branch, agent, rules, steps, copied, caveats}

Example:
  stepbox case new ep-20261201-101500-ab12 --name flaky-timeout
  stepbox case verify flaky-timeout
`;

/** \`stepbox case new\` — an episode joins the case library. */
export const command: CliCommand = {
  name: 'case new',
  summary: "save an episode as a case in the store's case library",
  help: HELP,
  async run(argv, io) {
    const { values, arg: id } = parseOneArg(
      argv,
      {
        branch: { type: 'string' },
        name: { type: 'string' },
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      'EPISODE (stepbox list shows them)',
    );
    if (!values.name) throw new UsageError('--name NAME is required (lowercase letters, digits and -)');
    const engine = cliEngine(io);
    try {
      const store = engine.store;
      const episode = resolveArg(store, id);
      let target = episode.branch;
      if (values.branch !== undefined) {
        const b = resolveArg(store, values.branch);
        if (b.episode !== episode.episode)
          throw new UsageError(
            `branch ${values.branch} belongs to episode ${b.episode}, not ${episode.episode}`,
          );
        target = b.branch;
      }
      let made;
      try {
        made = caseFromEpisode(store, target, values.name, {
          force: values.force,
          library: join(store.home, 'cases'),
        });
      } catch (e) {
        if (e instanceof CaseError)
          throw new UsageError(
            e.code === 'conflict' ? `${e.message}; pass --force to replace it` : e.message,
          );
        throw e;
      }
      if (values.json) printJson(io, { ...made, flags: undefined });
      else {
        io.stdout.write(`case ${made.name}: ${made.dir}\n`);
        io.stdout.write(
          `  from ${made.branch} (${made.agent} agent, ${countOf(made.steps, 'step')}); raises [${made.rules.join(', ')}]\n`,
        );
        for (const c of made.caveats) io.stdout.write(`  note: ${c}\n`);
        io.stdout.write(
          `  finish the walkthrough: ${made.dir}/README.md; check it: stepbox case verify ${made.name}\n`,
        );
      }
      return EXIT.ok;
    } finally {
      await engine.close();
    }
  },
};
