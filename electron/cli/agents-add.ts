import { parseArgs } from 'node:util';
import { AgentFailure } from '../engine/agents/agent.js';
import { installAgent } from '../engine/agents/agent-install.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import { formatBytes } from '../../shared/format-bytes.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson } from './store-common.js';

const HELP = `stepbox agents add NAME [--version V] [--force] [--json]

Installs a recipe's pinned npm package into $STEPBOX_HOME/agents/NAME/VERSION, so
--agent NAME runs it inside the sandbox with nothing else to set up: a platform binary
(npm pack) or a package with its dependencies (npm install --omit=dev --ignore-scripts),
plus its runtime (node@22 from npm, kept once for every agent). Downloads go through
npm, so npm's cache (~/.npm) keeps them: cache that directory in CI. A recipe changed
since its install is brought up to date (what differs is printed); an up-to-date one is
left alone unless --force. Recipes: codex, claude-code, opencode, pi, qwen-code, gemini,
copilot (stepbox agents list), and your own JSON files in $STEPBOX_HOME/agents/recipes.

Options:
  --version V   another version than the recipe's pinned one
  --force       reinstall even when the install is up to date
  --json        print {name, version, dir, bytes, recipe_hash, action, differs}

Examples:
  npx stepbox agents add gemini
  npx stepbox run resources/agents/gemini --agent gemini --model scripted:resources/agents/gemini/model.jsonl
`;

/** \`stepbox agents add\` — install an agent recipe's package into the store. */
export const command: CliCommand = {
  name: 'agents add',
  summary: 'install an agent that runs inside the sandbox (codex, claude-code, gemini, …)',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          version: { type: 'string' },
          force: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    if (positionals.length !== 1) throw new UsageError('give one recipe name, e.g. stepbox agents add codex');
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const done = await installAgent(positionals[0], {
        version: values.version,
        force: values.force,
        home: stepboxHome(io.env),
        signal: stop.signal,
        onProgress: (p) => io.stderr.write(`${p.message}\n`),
      });
      if (values.json) {
        printJson(io, done);
        return EXIT.ok;
      }
      const what =
        done.action === 'unchanged'
          ? `${done.name}@${done.version} is installed and up to date (stepbox agents add ${done.name} --force reinstalls)`
          : done.action === 'updated'
            ? `updated ${done.name}@${done.version}: the recipe's ${done.differs.join(', ')} changed; files kept`
            : `${done.action} ${done.name}@${done.version} (${formatBytes(done.bytes)}, recipe ${done.recipe_hash})${done.differs.length ? `: the recipe's ${done.differs.join(', ')} changed` : ''}`;
      io.stdout.write(`${what}\n  in ${done.dir}\n`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof AgentFailure && e.endReason === 'bad_agent_spec') throw new UsageError(e.message);
      if (e instanceof AgentFailure) {
        io.stderr.write(`stepbox agents add: ${e.message}\n`);
        return e.endReason === 'cancelled' ? EXIT.failed : EXIT.infra;
      }
      throw e;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};
