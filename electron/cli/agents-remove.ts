import { parseArgs } from 'node:util';
import { AgentFailure } from '../engine/agents/agent.js';
import { removeAgent } from '../engine/agents/agent-install.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson } from './store-common.js';

const HELP = `stepbox agents remove NAME [--version V] [--json]

Removes an agent installed by stepbox agents add (every installed version, or V) from
$STEPBOX_HOME/agents. A shared runtime (the Node of a recipe's "runtime": "node@22")
that no installed agent uses any more goes with it; one still used is kept. Its copy in Docker (a stepbox-agent-* volume) goes with
stepbox gc --agent-volumes; recorded episodes stay readable.

Options:
  --version V   remove only this version
  --json        print {name, removed: [VERSION], runtimes_removed: [RUNTIME]}

Example:
  npx stepbox agents remove gemini
`;

/** \`stepbox agents remove\` — remove an installed agent. */
export const command: CliCommand = {
  name: 'agents remove',
  summary: 'remove an installed agent',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: { version: { type: 'string' }, json: { type: 'boolean', default: false } },
      }),
    );
    if (positionals.length !== 1)
      throw new UsageError('give one agent name, e.g. stepbox agents remove codex');
    try {
      const name = positionals[0];
      const { versions, runtimes } = removeAgent(name, values.version, stepboxHome(io.env));
      if (values.json) printJson(io, { name, removed: versions, runtimes_removed: runtimes });
      else {
        io.stdout.write(`removed ${name} ${versions.join(', ')}\n`);
        for (const r of runtimes)
          io.stdout.write(`removed the ${r} runtime (no installed agent uses it any more)\n`);
      }
      return EXIT.ok;
    } catch (e) {
      if (e instanceof AgentFailure) throw new UsageError(e.message);
      throw e;
    }
  },
};
