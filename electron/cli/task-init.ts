import { existsSync, writeFileSync } from 'node:fs';
import { findDevcontainer, readDevcontainer } from '../engine/harness/devcontainer.js';
import { join, relative } from 'node:path';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { parseTask, type TaskInput } from '../../shared/task.js';
import { folderBuild, folderTaskInput, loadFolderWorld } from '../engine/harness/load-world.js';
import { isHarborTaskDir } from '../engine/harness/harbor-task.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOneArg } from './parse-or-usage.js';
import { printJson } from './store-common.js';
import { WORLD_FLAGS, WORLD_FLAGS_HELP, worldFlags } from './world-flags.js';

const HELP = `stepbox task init DIR [--goal TEXT] [--verify CMD] [--import-limit SIZE] [--force] [--json]

Writes DIR/task.json: the task \`stepbox run DIR --goal TEXT\` would run, as a file to edit
(the sandbox, setup commands, the verifier, timeouts); a Dockerfile in DIR is built as its
image ("sandbox": {"build": "."}). Its workspace is the folder itself
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

/** A devcontainer's sandbox section with its build context relative to the task file's folder. */
function relativeBuild(
  sandbox: NonNullable<TaskInput['sandbox']>,
  dir: string,
): NonNullable<TaskInput['sandbox']> {
  const build = sandbox.build;
  if (build === undefined || typeof build === 'string') return sandbox;
  return { ...sandbox, build: { ...build, context: relative(dir, build.context) || '.' } };
}

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
    // A task.json there would win over task.toml and copy tests/ and solution/ into the workspace.
    if (isHarborTaskDir(world.value.dir))
      throw new UsageError(
        `${world.value.dir} is a Harbor task folder (it holds task.toml): run it as it is (stepbox run ${world.value.dir} --agent …); its task is made from task.toml, so there is nothing to init`,
      );
    const path = join(world.value.dir, 'task.json');
    if (existsSync(path) && !values.force)
      throw new UsageError(`${path} exists already: edit it, or add --force to replace it`);
    // A devcontainer's image, environment, setup and working directory, as `run DIR` reads them.
    const dc = findDevcontainer(world.value.dir) ? readDevcontainer(world.value.dir, flags) : null;
    if (dc && !dc.ok) throw new UsageError(dc.error.message);
    // A bare folder's own Dockerfile is built (the warning `run DIR` gives names this field);
    // a devcontainer says its own image or build.
    const build = dc ? null : folderBuild(world.value.dir);
    const doc: TaskInput = {
      ...folderTaskInput(world.value.dir, flags, '.'),
      // The keys people edit first, with their defaults spelled out.
      sandbox: {
        // With a build, sandbox.image is ignored: not written, so it does not read as the image used.
        ...(build !== null ? { build } : { image: SANDBOX_IMAGE }),
        network: 'none',
        limits: { cpus: 1, memory: '1g', disk: '1g' },
        ...(dc ? relativeBuild(dc.value.input.sandbox ?? {}, world.value.dir) : {}),
      },
      max_steps: 30,
      verifier: flags.verify ? { command: flags.verify, timeout: 60 } : null,
    };
    doc.workspace = { ...doc.workspace, setup: dc ? [...(dc.value.input.workspace?.setup ?? [])] : [] };
    if (dc) for (const note of dc.value.notes) io.stderr.write(`${note}\n`);
    const checked = parseTask(doc, path);
    if (!checked.ok) throw new UsageError(checked.error.message);
    writeFileSync(path, JSON.stringify(doc, null, 2) + '\n');
    if (values.json) printJson(io, { path, task: doc });
    else {
      // The bare folder's warnings (its Dockerfile unused) are what this file answers.
      const answered = new Set(world.value.warnings.map((w) => `warning: ${world.value.dir}: ${w}`));
      for (const note of world.value.notes) if (!answered.has(note)) io.stderr.write(`${note}\n`);
      io.stdout.write(`wrote ${path}\n`);
      if (build !== null)
        io.stdout.write(
          `  its image is built from ${join(world.value.dir, 'Dockerfile')} ("sandbox": {"build": ${JSON.stringify(build)}})\n`,
        );
      if (values.goal === undefined)
        io.stdout.write(`  replace its placeholder "goal", then: stepbox run ${world.value.dir} --agent …\n`);
      else io.stdout.write(`  run it: stepbox run ${world.value.dir} --agent …\n`);
    }
    return EXIT.ok;
  },
};
