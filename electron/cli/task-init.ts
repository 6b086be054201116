import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { parseTask, type TaskInput } from '../../shared/task.js';
import { folderTaskInput, loadFolderWorld } from '../engine/harness/load-world.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOneArg } from './parse-or-usage.js';
import { printJson } from './store-common.js';
import { WORLD_FLAGS, WORLD_FLAGS_HELP, worldFlags } from './world-flags.js';

const HELP = `stepbox task init DIR [--goal TEXT] [--verify CMD] [--import-limit SIZE] [--force] [--json]

Writes DIR/task.json: the task \`stepbox run DIR --goal TEXT\` would run, as a file to edit
(the sandbox, setup commands, the verifier, timeouts). Its workspace is the folder itself
("workspace": {"from": "."}: in a git checkout the files git sees and .git, otherwise every
file; task.json itself is left out). From then on \`stepbox run DIR\` runs that file. Without
--goal the goal is a placeholder to replace. An existing task.json is kept unless --force.

Options:
${WORLD_FLAGS_HELP}
  --force           replace an existing DIR/task.json
  --json            print {path, task} on stdout

Examples:
  stepbox task init ~/src/my-project --goal "Make the tests pass" --verify "npm test"
  stepbox run ~/src/my-project --agent codex
`;

/** The goal written when none is given: valid, and plainly a placeholder. */
const PLACEHOLDER_GOAL = 'TODO: say what the agent should do in this project';

/** `stepbox task init` — a project folder's task, written as a file to edit. */
export const command: CliCommand = {
  name: 'task init',
  summary: 'write DIR/task.json: the task `stepbox run DIR --goal …` would run, to edit',
  help: HELP,
  async run(argv, io) {
    const { values, arg } = parseOneArg(
      argv,
      {
        ...WORLD_FLAGS,
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      'DIR (a project folder)',
    );
    const flags = { ...worldFlags(values), goal: values.goal ?? PLACEHOLDER_GOAL };
    // The same checks as `run DIR` (a folder, under the import limit), the same task.
    const world = loadFolderWorld(arg, flags);
    if (!world.ok) throw new UsageError(world.error.message);
    const path = join(world.value.dir, 'task.json');
    if (existsSync(path) && !values.force)
      throw new UsageError(`${path} exists already: edit it, or add --force to replace it`);
    const doc: TaskInput = {
      ...folderTaskInput(world.value.dir, flags, '.'),
      // The keys people edit first, with their defaults spelled out.
      sandbox: { image: SANDBOX_IMAGE, network: 'none', limits: { cpus: 1, memory: '1g', disk: '1g' } },
      max_steps: 30,
      verifier: flags.verify ? { command: flags.verify, timeout: 60 } : null,
    };
    doc.workspace = { ...doc.workspace, setup: [] };
    const checked = parseTask(doc, path);
    if (!checked.ok) throw new UsageError(checked.error.message);
    writeFileSync(path, JSON.stringify(doc, null, 2) + '\n');
    if (values.json) printJson(io, { path, task: doc });
    else {
      for (const note of world.value.notes) io.stderr.write(`${note}\n`);
      io.stdout.write(`wrote ${path}\n`);
      if (values.goal === undefined)
        io.stdout.write(`  replace its placeholder "goal", then: stepbox run ${world.value.dir} --agent …\n`);
      else io.stdout.write(`  run it: stepbox run ${world.value.dir} --agent …\n`);
    }
    return EXIT.ok;
  },
};
