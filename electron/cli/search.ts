import { parseArgs } from 'node:util';
import type { SearchQuery } from '../engine/trace/episode-index.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { openStoreAndIndex, printJson, table } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { intFlag } from './number-flags.js';

const HELP = `stepbox search [--tool T] [--error CODE] [--flag RULE] [--memory KEY[=VALUE]] [--limit N] [--json]

Finds branches in the index. Every filter given must match (on any step); the steps
that matched are listed. A branch matches on the steps its own trace recorded: the
steps a fork inherited match on its parent.

Filters:
  --tool T             a call of tool T (execute_shell, read_file, lookup, ...)
  --error CODE         a tool error code (timeout, not_found, ...), an error event's code
                       (model_error, ...), or parse_error
  --flag RULE          a QA flag of rule RULE (written by \`stepbox check\`)
  --memory KEY[=VALUE] a memory write to KEY (of VALUE: JSON like null or 3, or a plain
                       string like None)

Options:
  --limit N   at most N branches (default 100)
  --json      print {matches: [{episode, branch, task, status, hits: [{filter, step, detail}]}]}

Examples:
  npx stepbox search --error timeout
  npx stepbox search --memory weather=None --json
  npx stepbox search --tool execute_shell --flag loop
`;

/** `stepbox search` — episodes by tool, error, flag or memory write. */
export const command: CliCommand = {
  name: 'search',
  summary: 'find episodes by tool, error code, QA flag or memory write',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          tool: { type: 'string' },
          error: { type: 'string' },
          flag: { type: 'string' },
          memory: { type: 'string' },
          limit: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    if ([values.tool, values.error, values.flag, values.memory].every((v) => v === undefined))
      throw new UsageError('give at least one of --tool, --error, --flag, --memory');
    const limit = intFlag('limit', values.limit, { min: 1 }) ?? 100;
    let memory: SearchQuery['memory'];
    if (values.memory !== undefined) {
      const eq = values.memory.indexOf('=');
      memory =
        eq < 0
          ? { key: values.memory }
          : { key: values.memory.slice(0, eq), value: values.memory.slice(eq + 1) };
      if (!memory.key) throw new UsageError('--memory needs a KEY (KEY or KEY=VALUE)');
    }
    const { index } = openStoreAndIndex(io);
    const matches = index.search({
      tool: values.tool,
      error: values.error,
      flag: values.flag,
      memory,
      limit,
    });
    index.close();
    if (values.json) {
      printJson(io, { matches });
      return EXIT.ok;
    }
    if (matches.length === 0) {
      io.stdout.write('No matching episodes.\n');
      return EXIT.ok;
    }
    const rows = [['BRANCH', 'TASK', 'STATUS', 'STEP', 'MATCH']];
    for (const m of matches)
      m.hits.forEach((h, i) =>
        rows.push(
          i === 0
            ? [m.branch, m.task, m.status, String(h.step ?? '-'), `${h.filter}: ${h.detail}`]
            : ['', '', '', String(h.step ?? '-'), `${h.filter}: ${h.detail}`],
        ),
      );
    io.stdout.write(table(rows));
    io.stdout.write(
      `${matches.length} branch${matches.length === 1 ? '' : 'es'}; \`stepbox show BRANCH\` for the timeline\n`,
    );
    return EXIT.ok;
  },
};
