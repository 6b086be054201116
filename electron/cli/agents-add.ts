import { parseArgs } from 'node:util';
import { AgentFailure } from '../engine/agents/agent.js';
import { addRecipe } from '../engine/agents/recipes.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson } from './store-common.js';

const HELP = `stepbox agents add NAME [--version V] [--json]

Installs a recipe's pinned npm package (its binary ships inside the package) into
$STEPBOX_HOME/agents/NAME/VERSION, so --agent NAME runs it inside the sandbox with
nothing else to set up. The download goes through npm (npm pack), so npm's cache
(~/.npm) keeps it: cache that directory in CI. Recipes: codex (Codex CLI 0.171.0),
claude-code (Claude Code 2.1.332), and your own JSON files in $STEPBOX_HOME/agents/recipes.

Options:
  --version V   another version than the recipe's pinned one
  --json        print {name, version, dir}

Examples:
  npx stepbox agents add codex
  npx stepbox run resources/tasks/hello-python --agent codex --model scripted:codex.jsonl
`;

/** \`stepbox agents add\` — install an agent recipe's package into the store. */
export const command: CliCommand = {
  name: 'agents add',
  summary: 'install an agent that runs inside the sandbox (codex, claude-code)',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: { version: { type: 'string' }, json: { type: 'boolean', default: false } },
      }),
    );
    if (positionals.length !== 1) throw new UsageError('give one recipe name, e.g. stepbox agents add codex');
    try {
      const done = addRecipe(positionals[0], values.version, stepboxHome(io.env), (l) =>
        io.stderr.write(`${l}\n`),
      );
      if (values.json) printJson(io, { name: done.name, version: done.version, dir: done.dir });
      else io.stdout.write(`installed ${done.name}@${done.version} in ${done.dir}\n`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof AgentFailure && e.endReason === 'bad_agent_spec') throw new UsageError(e.message);
      if (e instanceof AgentFailure) {
        io.stderr.write(`stepbox agents add: ${e.message}\n`);
        return EXIT.infra;
      }
      throw e;
    }
  },
};
