import { parseArgs } from 'node:util';
import { writeLongTrace } from '../bench/ui-trace.js';
import type { CliCommand } from './command.js';
import { EXIT } from './command.js';
import { openEngine } from '../engine/open-engine.js';
import { intFlag } from './number-flags.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson } from './store-common.js';
import { countOf } from '../../shared/count-of.js';

const HELP = `stepbox long-trace [--steps N] [--json]

Writes a recorded episode of N shell steps (default 10,000) into the store, so you can try
the window, search, check, share and export on a long trace without running one. It is the
same trace the bench's ui section and the long-trace journey test open. No sandbox runs:
every step's snapshot is one small workspace.

Options:
  --steps N   how many steps (1 to 100000; default 10000)
  --json      print {episode, branch, steps}

Example:
  stepbox long-trace && stepbox list        # then open it in the window's Library
`;

/** \`stepbox long-trace\` — a recorded 10,000-step episode to try the window on. */
export const command: CliCommand = {
  name: 'long-trace',
  summary: 'write a recorded 10,000-step episode into the store (to try the window on)',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { steps: { type: 'string' }, json: { type: 'boolean', default: false } },
      }),
    );
    const steps = intFlag('steps', values.steps, { min: 1, max: 100_000 }) ?? 10_000;
    // Only the store's folder: nothing here needs the container engine.
    const engine = openEngine({ env: io.env, sweep: false });
    const home = engine.store.home;
    await engine.close();
    const trace = await writeLongTrace(home, steps);
    if (values.json) printJson(io, trace);
    else
      io.stdout.write(
        `Wrote ${trace.episode} (${countOf(trace.steps, 'step')}) in ${home}: open it in the window's Library\n`,
      );
    return EXIT.ok;
  },
};
