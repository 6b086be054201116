import { parseArgs } from 'node:util';
import { caseNames, CaseError, loadCase } from '../engine/cases/case-library.js';
import type { CliCommand } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { EXIT } from './command.js';

const HELP = `stepbox case list [--json]

Lists the classic-failure cases, bundled and from the store's library ($STEPBOX_HOME/cases): each is a task, a scripted agent that fails in
a classic way, a fixed variant, the QA rules it raises, and a walkthrough (README.md).

Options:
  --json   print {cases: [{name, title, rules, episodes, dir, origin, has_fixed, readme}]}
           (origin: bundled, or library — the store's cases, from stepbox case new)

Example:
  stepbox case list
  stepbox case run tool-loop-vague-error
`;

/** `stepbox case list` — the classic-failure case library. */
export const command: CliCommand = {
  name: 'case list',
  summary: 'list the classic-failure cases with the QA rules each raises',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({ args: argv, options: { json: { type: 'boolean', default: false } } }),
    );
    let cases;
    try {
      cases = caseNames().map((name) => loadCase(name));
    } catch (e) {
      if (e instanceof CaseError) {
        io.stderr.write(`stepbox case list: ${e.message}\n`);
        return EXIT.failed;
      }
      throw e;
    }
    if (values.json) {
      const out = cases.map((c) => ({
        name: c.name,
        title: c.title,
        rules: c.expected.rules,
        episodes: c.expected.episodes,
        dir: c.dir,
        origin: c.origin,
        has_fixed: c.hasFixed,
        readme: `${c.dir}/README.md`,
      }));
      io.stdout.write(JSON.stringify({ cases: out }, null, 2) + '\n');
    } else {
      const width = Math.max(...cases.map((c) => c.name.length));
      for (const c of cases)
        io.stdout.write(`${c.name.padEnd(width)}  ${c.title}  [${c.expected.rules.join(', ')}]\n`);
    }
    return EXIT.ok;
  },
};
