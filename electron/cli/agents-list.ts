import { parseArgs } from 'node:util';
import { listAgents } from '../engine/agents/agent-install.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import { formatBytes } from '../../shared/format-bytes.js';
import type { CliCommand } from './command.js';
import { EXIT } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson } from './store-common.js';

const HELP = `stepbox agents list [--json]

Lists the agent recipes (bundled and yours in $STEPBOX_HOME/agents/recipes) and what
stepbox agents add installed of each: version, size, the hash of the recipe it was
installed from, and whether that is the recipe as it is now (else: stepbox agents add
NAME brings it up to date).

Options:
  --json   print {agents: [{name, description, pinned, runtime, recipe_hash,
           installed: [{version, bytes, recipe_hash, up_to_date, runtime}]}]}

Example:
  npx stepbox agents list
`;

/** \`stepbox agents list\` — recipes and what is installed. */
export const command: CliCommand = {
  name: 'agents list',
  summary: 'list agent recipes and the installed versions (size, up to date)',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({ args: argv, options: { json: { type: 'boolean', default: false } } }),
    );
    const agents = listAgents(stepboxHome(io.env));
    if (values.json) {
      printJson(io, { agents });
      return EXIT.ok;
    }
    for (const a of agents) {
      const inst = a.installed.map(
        (i) =>
          `${i.version} ${i.bytes === null ? '?' : formatBytes(i.bytes)} recipe ${i.recipe_hash ?? '?'} ${i.up_to_date ? 'up to date' : `out of date (stepbox agents add ${a.name})`}`,
      );
      io.stdout.write(
        `${a.name.padEnd(12)} ${inst.length ? inst.join('; ') : `not installed (stepbox agents add ${a.name}; pins ${a.pinned})`}  — ${a.description}\n`,
      );
    }
    return EXIT.ok;
  },
};
