import { parseArgs } from 'node:util';
import { installed, listRecipes } from '../engine/agents/recipes.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { CliCommand } from './command.js';
import { EXIT } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson } from './store-common.js';

const HELP = `stepbox agents list [--json]

Lists the agent recipes (bundled and yours in $STEPBOX_HOME/agents/recipes) and the
versions installed by stepbox agents add.

Options:
  --json   print {agents: [{name, description, pinned, installed: [VERSION]}]}

Example:
  npx stepbox agents list
`;

/** \`stepbox agents list\` — recipes and what is installed. */
export const command: CliCommand = {
  name: 'agents list',
  summary: 'list agent recipes and the installed versions',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({ args: argv, options: { json: { type: 'boolean', default: false } } }),
    );
    const home = stepboxHome(io.env);
    const agents = listRecipes(home).map((r) => ({
      name: r.name,
      description: r.description,
      pinned: r.package.version,
      installed: installed(r.name, home).map((i) => i.version),
    }));
    if (values.json) {
      printJson(io, { agents });
      return EXIT.ok;
    }
    for (const a of agents)
      io.stdout.write(
        `${a.name.padEnd(14)} ${a.installed.length ? `installed ${a.installed.join(', ')}` : `not installed (stepbox agents add ${a.name})`}  — ${a.description}\n`,
      );
    return EXIT.ok;
  },
};
