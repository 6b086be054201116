import { lstatSync, statSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { outsideBuildContext, outsideWorld } from '../folder-files.js';
import { appError, type AppError } from '../../../shared/errors.js';
import { formatBytes } from '../../../shared/format-bytes.js';
import { err, ok, type Result } from '../../../shared/result.js';
import { SANDBOX_IMAGE } from '../../../shared/constants.js';
import { parseSize } from '../../../shared/size.js';
import { parseTask, type Task, type TaskInput } from '../../../shared/task.js';
import { cappedLines } from '../../../shared/validation-issues.js';
import { biggestPaths, listFolder, type FolderListing } from './folder-listing.js';
import { loadTask } from './load-task.js';
import { findDevcontainer, readDevcontainer } from './devcontainer.js';
import { SNAPSHOT_FILE_CAP_BYTES } from '../sandbox/docker-sandbox.js';
import { HARBOR_TASK_FILE, harborDatasetTasks, loadHarborTask } from './harbor-task.js';
import { isImportedCaseTask } from './imported-marker.js';

/**
 * THE way a path becomes a task (design: World). `stepbox run`, `batch`, the window's
 * start and Open… all call {@link loadWorld}; each way of writing a world is one
 * {@link WorldReader} in {@link READERS}. The task it returns is what the trace header
 * records, so fork, replay, bundle, case and share treat every world alike.
 */

/** How a world was written. Each reader adds its own kind. */
export type WorldKind = 'task' | 'folder' | 'devcontainer' | 'harbor';

/** A world read from a path: the task to run and where it came from. */
export interface World {
  /** The task, with every default filled in and `workspace.from` made absolute. */
  readonly task: Task;
  /** The folder the task's relative paths are relative to (absolute). */
  readonly dir: string;
  /** The task file it was read from, or null when the task was made from flags (a bare folder). */
  readonly taskPath: string | null;
  readonly kind: WorldKind;
  /** What a person should see before it runs: how the folder was read, what was skipped (one line each). */
  readonly notes: readonly string[];
  /**
   * What of the world stepbox leaves out or does otherwise than it says (a devcontainer's
   * `forwardPorts`, a bare folder's Dockerfile), one short line each without its file's path:
   * the notes say each too, for the CLI; the window's project card and step 0 say these, and
   * the trace header records them (`world_warnings`).
   */
  readonly warnings: readonly string[];
}

/** What the command line (or the window's start form) adds to a path. */
export interface WorldFlags {
  /** The goal of a bare folder (`--goal`). */
  readonly goal?: string;
  /** The verifier command of a bare folder (`--verify`). */
  readonly verify?: string;
  /** The largest folder copied into the workspace, Docker size syntax (`--import-limit`); default 1g. */
  readonly importLimit?: string;
  /** The user's consent to a network the world asks for (`--allow-network`: Harbor's allow_internet). */
  readonly allowNetwork?: boolean;
}

/** One way of writing a world. */
export interface WorldReader {
  readonly kind: WorldKind;
  /** Whether `--goal` / `--verify` mean something here (a bare folder has no goal of its own). */
  readonly takesGoal: boolean;
  /** Whether this reader reads the folder `dir` (absolute, existing). */
  claims(dir: string): boolean;
  read(dir: string, flags: WorldFlags): Result<World, AppError>;
  /**
   * The warnings {@link read} would give, without a goal and without listing the folder's files
   * (the window's project card, before its Goal is typed), or why it cannot be read. Absent:
   * read as a start reads it (a task that says its own goal).
   */
  warnings?(dir: string): Result<readonly string[], AppError>;
}

/** The default of `workspace.import_limit`. */
export const DEFAULT_IMPORT_LIMIT = '1g';

/** A folder holding a task.json: the task file as written. */
const taskFolderReader: WorldReader = {
  kind: 'task',
  takesGoal: false,
  claims: (dir) => isFile(resolve(dir, 'task.json')),
  read: (dir, flags) => readTaskFile(resolve(dir, 'task.json'), flags),
};

/** A Harbor task folder (task.toml + instruction.md; harbor-task.ts): its instruction is the goal. */
const harborReader: WorldReader = {
  kind: 'harbor',
  takesGoal: false,
  claims: (dir) => isFile(resolve(dir, HARBOR_TASK_FILE)),
  read: (dir, flags) => {
    const harbor = loadHarborTask(dir, { allowNetwork: flags.allowNetwork });
    if (!harbor.ok) return harbor;
    const { task, taskPath, notes } = harbor.value;
    // Every note of a Harbor task is a key it does not honour.
    return ok({ task, dir, taskPath, kind: 'harbor', notes, warnings: notes });
  },
};

/** A folder of Harbor task folders (a dataset) is many tasks: `batch` takes it, one run does not. */
const harborDatasetReader: WorldReader = {
  kind: 'harbor',
  // With --goal it is a project folder that happens to hold Harbor tasks (read as any folder).
  takesGoal: true,
  claims: (dir) => harborDatasetTasks(dir).length > 0,
  read: (dir, flags) => {
    if (flags.goal !== undefined) return folderReader.read(dir, flags);
    const tasks = harborDatasetTasks(dir);
    return err(
      appError(
        'usage',
        `${dir} is a folder of ${tasks.length} Harbor task folders (a dataset): run one (stepbox run ${tasks[0]} --agent …) or all of them with stepbox batch ${dir} --agent …`,
      ),
    );
  },
};

/** Any other folder: the project itself is the workspace; the goal comes from `--goal`. */
const folderReader: WorldReader = {
  kind: 'folder',
  takesGoal: true,
  claims: () => true,
  read: (dir, flags) => {
    if (!flags.goal || flags.goal.trim() === '')
      return err(
        appError(
          'usage',
          `${dir} has no task.json, so the goal must come from --goal: add --goal "what the agent should do" (and --verify CMD to check it), or write a task file to edit with: stepbox task init ${dir} --goal "…"`,
        ),
      );
    const parsed = parseTask(folderTaskInput(dir, flags), `the task made for ${dir}`);
    if (!parsed.ok) return parsed;
    const warnings = folderWarnings(dir);
    return withFolder(
      parsed.value,
      dir,
      null,
      'folder',
      flags,
      warnings.map((w) => `warning: ${dir}: ${w}`),
      warnings,
    );
  },
  warnings: (dir) => ok(folderWarnings(dir)),
};

/**
 * What a bare folder has that its task leaves unused: a Dockerfile (the window showed "folder ·
 * bare-docker" and ran on the default image without a word). The fix is the task field a
 * build is read from, `sandbox.build` (README "Your own image").
 */
function folderWarnings(dir: string): string[] {
  const build = folderBuild(dir);
  return build !== null
    ? [
        `its Dockerfile is not used: a folder without task.json runs on ${SANDBOX_IMAGE}. To build from it, write a task.json here with "sandbox": {"build": ${JSON.stringify(build)}}`,
      ]
    : [];
}

/**
 * The `sandbox.build` a bare folder's own Dockerfile asks for (`"."`), or null without one: the
 * one rule behind the folder's warning and what `stepbox task init` writes (it wrote a task
 * that left the Dockerfile unused, and said the warning as it did).
 */
export function folderBuild(dir: string): string | null {
  return isFile(join(dir, 'Dockerfile')) ? '.' : null;
}

/**
 * A project folder with a devcontainer.json (devcontainer.ts): its image or Dockerfile,
 * environment, lifecycle commands (setup) and workspace folder; the project is the workspace
 * and the goal comes from `--goal`, as for any folder.
 */
const devcontainerReader: WorldReader = {
  kind: 'devcontainer',
  takesGoal: true,
  claims: (dir) => findDevcontainer(dir) !== null,
  read: (dir, flags) => {
    if (!flags.goal || flags.goal.trim() === '')
      return err(
        appError(
          'usage',
          `${dir} has a devcontainer.json but no task.json, so the goal must come from --goal: add --goal "what the agent should do" (and --verify CMD to check it)`,
        ),
      );
    const read = readDevcontainer(dir, flags);
    if (!read.ok) return read;
    const input = flags.importLimit
      ? { ...read.value.input, workspace: { ...read.value.input.workspace, import_limit: flags.importLimit } }
      : read.value.input;
    const parsed = parseTask(input, `the task made from ${read.value.file}`);
    if (!parsed.ok) return parsed;
    return withFolder(
      parsed.value,
      dir,
      null,
      'devcontainer',
      flags,
      [...read.value.notes],
      read.value.warnings,
    );
  },
  warnings: (dir) => {
    const read = readDevcontainer(dir, {});
    return read.ok ? ok(read.value.warnings) : read;
  },
};

/**
 * Every reader, tried in order on a folder: the first that claims it reads it. A new way
 * of writing a world (a devcontainer, a Harbor task folder) adds one entry here, before
 * {@link folderReader}, which claims every folder.
 */
export const READERS: readonly WorldReader[] = [
  taskFolderReader,
  harborReader,
  harborDatasetReader,
  devcontainerReader,
  folderReader,
];

/**
 * True when the folder `dir` needs a goal to be a world (a project folder, a devcontainer
 * folder), false when it says what to do itself (a task.json, a Harbor task's instruction.md):
 * asked of the reader that claims it, as {@link loadWorld} does, so the window's Open… lists a
 * folder the way `stepbox run` reads it.
 */
export function folderTakesGoal(dir: string): boolean {
  return READERS.find((r) => r.claims(dir))!.takesGoal;
}

/** What the window's project card says of a world before it starts (see {@link worldFacts}). */
export interface WorldFacts {
  readonly kind: WorldKind;
  /** The world's warnings ({@link World.warnings}), as its start gives them. */
  readonly warnings: readonly string[];
  /** Why it cannot start as it is (its file does not read), or null. */
  readonly problem: AppError | null;
  /**
   * What its task asks (a task.json's goal, a Harbor task's instruction.md), or null for a
   * folder that takes a goal, or one that does not read: the card says it before a start.
   */
  readonly goal: string | null;
}

/**
 * The world at `path` as its reader sees it now, for a project card: a task that says its own
 * goal read whole (as its start reads it), a folder that takes one read without it and without
 * listing its files (the card is read again each time it is reached).
 */
export function worldFacts(path: string): WorldFacts {
  const abs = resolve(path);
  const kind = worldKindOf(abs);
  const reader = statSync(abs, { throwIfNoEntry: false })?.isDirectory()
    ? READERS.find((r) => r.claims(abs))!
    : null;
  if (reader?.takesGoal) {
    const warnings = reader.warnings?.(abs) ?? ok([]);
    return warnings.ok
      ? { kind, warnings: warnings.value, problem: null, goal: null }
      : { kind, warnings: [], problem: warnings.error, goal: null };
  }
  const world = loadWorld(abs);
  return world.ok
    ? { kind, warnings: world.value.warnings, problem: null, goal: world.value.task.goal }
    : { kind, warnings: [], problem: world.error, goal: null };
}

/** How the world at `path` is written, as its reader says (a `.json` file is a task file). */
export function worldKindOf(path: string): WorldKind {
  const abs = resolve(path);
  return statSync(abs, { throwIfNoEntry: false })?.isDirectory()
    ? READERS.find((r) => r.claims(abs))!.kind
    : 'task';
}

/**
 * Reads the world at `path`: a task.json, or a folder (a task folder, or a project folder
 * with `--goal`). Errors name what is wrong and the fix: a missing path, a file that is not
 * a task, a bare folder without a goal, a folder over the import limit.
 */
export function loadWorld(path: string, flags: WorldFlags = {}): Result<World, AppError> {
  const bad = badFlags(flags);
  if (bad) return bad;
  const abs = resolve(path);
  const kind = pathKind(abs, true);
  if (!kind.ok) return kind;
  if (kind.value === 'file') {
    // A Harbor task's task.toml names its folder (a batch keeps that path for --resume).
    if (basename(abs) === HARBOR_TASK_FILE) {
      const refused = refuseGoal('harbor', dirname(abs), flags);
      return refused ?? harborReader.read(dirname(abs), flags);
    }
    const refused = refuseGoal('task', abs, flags);
    return refused ?? readTaskFile(abs, flags);
  }
  const dir = realpathSync(abs);
  const reader = READERS.find((r) => r.claims(dir))!;
  const refused = reader.takesGoal ? null : refuseGoal(reader.kind, dir, flags);
  return refused ?? reader.read(dir, flags);
}

/**
 * The world `stepbox run DIR --goal …` makes of a project folder, whatever else it holds
 * (`task init` writes it as a file): DIR must be a folder.
 */
export function loadFolderWorld(path: string, flags: WorldFlags): Result<World, AppError> {
  const bad = badFlags(flags);
  if (bad) return bad;
  const abs = resolve(path);
  const kind = pathKind(abs, false);
  if (!kind.ok) return kind;
  return folderReader.read(realpathSync(abs), flags);
}

/** Whether `abs` is a folder or a task file, or the error naming what it is and the fix. */
function pathKind(abs: string, taskFiles: boolean): Result<'dir' | 'file', AppError> {
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return err(
      appError(
        'not_found',
        code === 'ENOENT'
          ? `${abs} does not exist: give a project folder${taskFiles ? ' or a task.json' : ''} (check the path)`
          : `cannot read ${abs} (${code ?? (e as Error).message}): check its permissions`,
      ),
    );
  }
  if (isDir) return ok('dir');
  if (taskFiles && (/\.json$/i.test(abs) || basename(abs) === HARBOR_TASK_FILE)) return ok('file');
  return err(
    appError(
      'invalid_input',
      `${abs} is a file, not a folder: give the project folder that holds it (${dirname(abs)})${taskFiles ? ' or a task.json' : ''}`,
    ),
  );
}

/** The task `stepbox run DIR --goal …` makes (and `task init` writes), before defaults; `from` as given. */
export function folderTaskInput(dir: string, flags: WorldFlags, from: string = dir): TaskInput {
  return {
    name: basename(dir) || 'workspace',
    goal: flags.goal ?? '',
    ...(flags.verify ? { verifier: { command: flags.verify } } : {}),
    workspace: { from, ...(flags.importLimit ? { import_limit: flags.importLimit } : {}) },
  };
}

/** A flag whose value cannot be used, as a usage error. */
function badFlags(flags: WorldFlags): Result<World, AppError> | null {
  if (flags.importLimit !== undefined && parseSize(flags.importLimit) === null)
    return err(
      appError('usage', `--import-limit ${flags.importLimit}: expected a Docker size such as "2g" or "500m"`),
    );
  return null;
}

/** `--goal`/`--verify` given where the task says its own: an error naming the field to edit. */
function refuseGoal(kind: WorldKind, where: string, flags: WorldFlags): Result<World, AppError> | null {
  const flag = flags.goal !== undefined ? '--goal' : flags.verify !== undefined ? '--verify' : null;
  if (!flag) return null;
  const field = flag === '--goal' ? 'goal' : 'verifier.command';
  return err(
    appError(
      'usage',
      `${flag} is for a folder without a task of its own; ${where} is a ${kind} that sets its ${field}: edit it there, or leave ${flag} out`,
    ),
  );
}

/** A task.json, with its `workspace.from` resolved against the file's folder and listed. */
function readTaskFile(file: string, flags: WorldFlags): Result<World, AppError> {
  const loaded = loadTask(file);
  if (!loaded.ok) return loaded;
  // A bundle's task says so first: its folder is refused whatever it names.
  const from = loaded.value.workspace.from;
  const imported = from !== undefined ? refuseImported(file, from) : null;
  if (imported) return imported;
  const outside = outsideTaskFolder(loaded.value, file, ['workspace.from', 'sandbox.build']);
  if (outside) return err(outside);
  return withFolder(loaded.value, dirname(file), file, 'task', flags, [], []);
}

/** The host paths a task file may name: each resolves against the file's folder. */
type TaskFilePath = 'workspace.from' | 'sandbox.build';

/**
 * Why a path the task file `file` names (`fields` of them) is not its own: the rule of every
 * world (folder-files.ts `outsideWorld`, as for a devcontainer's build context and a Harbor
 * task's files) — it resolves against the file's folder and stays inside it, never through a
 * link. A cloned repository's task.json is as untrusted as its devcontainer.json: `"from":
 * "~/.ssh"` would copy the keys into the sandbox (and every trace and bundle), `"build": "/"`
 * send the whole disk to the engine for COPY to take. A folder elsewhere is the person's to
 * name: `stepbox run DIR --goal …`, or a task file put inside it.
 */
export function outsideTaskFolder(
  task: Task,
  file: string,
  fields: readonly TaskFilePath[],
): AppError | null {
  const dir = dirname(resolve(file));
  const named: [string, string][] = [];
  if (fields.includes('workspace.from') && task.workspace.from !== undefined)
    named.push(['workspace.from', task.workspace.from]);
  const build = task.sandbox.build;
  if (fields.includes('sandbox.build') && build !== undefined) {
    const context = typeof build === 'string' ? build : build.context;
    named.push([typeof build === 'string' ? 'sandbox.build' : 'sandbox.build.context', context]);
    if (typeof build !== 'string' && build.dockerfile !== undefined)
      named.push(['sandbox.build.dockerfile', join(context, build.dockerfile)]);
  }
  const buildFix = `put the Dockerfile and what it copies inside ${dir} (paths in a task file are relative to its folder), or build the image yourself (docker build -t NAME PATH) and name it in sandbox.image`;
  for (const [field, path] of named) {
    const outside = outsideWorld(
      dir,
      resolve(dir, path),
      `${file}: ${field} ${JSON.stringify(path)}`,
      field === 'workspace.from'
        ? `name a folder inside ${dir} (paths in a task file are relative to its folder), or put the task file in the folder it seeds ("from": ".", as stepbox task init DIR writes), or run that folder itself: stepbox run DIR --goal "…"`
        : buildFix,
    );
    if (outside) return outside;
  }
  if (build === undefined || !fields.includes('sandbox.build')) return null;
  // The context (a named Dockerfile's folder) goes to the engine whole: no link in it may leave it.
  const given = typeof build === 'string' ? build : build.context;
  const namedPath = resolve(dir, given);
  const context = isFolder(namedPath) || typeof build !== 'string' ? namedPath : dirname(namedPath);
  return outsideBuildContext(
    dir,
    context,
    `${file}: ${typeof build === 'string' ? 'sandbox.build' : 'sandbox.build.context'} ${JSON.stringify(given)}`,
    buildFix,
  );
}

/** Whether `path` is a folder (not through a link); false when it is missing. */
function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A task file as a case's task is read (case list, case run): its `workspace.from`
 * resolved against the file's folder as a path only — a listing of cases does not read
 * their folders; the episode's start lists and checks it (and {@link refuseImported}).
 */
export function loadCaseTask(file: string): Result<Task, AppError> {
  const loaded = loadTask(file);
  if (!loaded.ok) return loaded;
  // A case's build is checked as any task file's; its `from` may be absolute: `case new` keeps
  // the episode's own project folder (a recorded task has no build), and an imported case's
  // `from` is refused apart ({@link refuseImported}).
  const outside = outsideTaskFolder(loaded.value, file, ['sandbox.build']);
  if (outside) return err(outside);
  const from = loaded.value.workspace.from;
  if (from === undefined) return loaded;
  return ok({
    ...loaded.value,
    workspace: { ...loaded.value.workspace, from: resolve(dirname(file), from) },
  });
}

/** A bundle may name any path: the task of an imported case never reads a folder of this machine by itself. */
export function refuseImported(taskPath: string, from: string): Result<never, AppError> | null {
  if (!isImportedCaseTask(taskPath)) return null;
  return err(
    appError(
      'invalid_task',
      `${taskPath} came from a bundle and names a folder of this machine (workspace.from ${JSON.stringify(from)}); stepbox never copies a folder a bundle names by itself: if you mean it, copy the task file elsewhere and run it as your own (stepbox run FILE)`,
    ),
  );
}

/**
 * The task with its `workspace.from` (if any) absolute, checked (a folder that exists, under
 * the import limit and the workspace's size) and listed into the notes. `from` is
 * relative to `dir`.
 */
function withFolder(
  task: Task,
  dir: string,
  taskPath: string | null,
  kind: WorldKind,
  flags: WorldFlags,
  notes: string[],
  warnings: readonly string[],
): Result<World, AppError> {
  let t = task;
  if (flags.importLimit !== undefined)
    t = { ...t, workspace: { ...t.workspace, import_limit: flags.importLimit } };
  const from = t.workspace.from;
  if (from === undefined) return ok({ task: t, dir, taskPath, kind, notes, warnings });
  const refused = taskPath ? refuseImported(taskPath, from) : null;
  if (refused) return refused;
  const folder = resolveFrom(from, dir, taskPath);
  if (!folder.ok) return folder;
  t = { ...t, workspace: { ...t.workspace, from: folder.value } };
  const listing = listWorkspaceFolder(t, taskPath);
  if (!listing.ok) return listing;
  return ok({ task: t, dir, taskPath, kind, notes: [...notes, ...listingNotes(listing.value)], warnings });
}

/** `workspace.from` as an absolute real path, or an error naming the field and the fix. */
function resolveFrom(from: string, dir: string, taskPath: string | null): Result<string, AppError> {
  const abs = resolve(dir, from);
  const field = taskPath ? `workspace.from in ${taskPath}` : 'the project folder';
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return err(
      appError(
        'not_found',
        code === 'ENOENT'
          ? `${field} names ${abs}, which does not exist: fix the path (it is relative to ${dir})`
          : `${field} names ${abs}, which cannot be read (${code ?? (e as Error).message}): check its permissions`,
      ),
    );
  }
  if (!isDir)
    return err(
      appError(
        'invalid_task',
        `${field} names ${abs}, a file, not a folder: name the folder whose files seed the workspace (inline files go in workspace.files)`,
      ),
    );
  return ok(realpathSync(abs));
}

/**
 * Lists the folder of a task's `workspace.from` (absolute) and checks its size against
 * `workspace.import_limit` and the workspace's own size (`sandbox.limits.disk`). The task
 * file itself, when it lies in the folder, is not part of the world (it may hold the verifier).
 */
export function listWorkspaceFolder(task: Task, taskPath: string | null): Result<FolderListing, AppError> {
  const root = task.workspace.from;
  if (root === undefined) throw new Error('listWorkspaceFolder: the task has no workspace.from');
  const inside = taskPath ? relative(root, taskPath).split(sep).join('/') : '';
  const exclude = inside && !inside.startsWith('..') ? [inside] : [];
  const limitText = task.workspace.import_limit ?? DEFAULT_IMPORT_LIMIT;
  const limit = parseSize(limitText) ?? Infinity;
  const disk = parseSize(task.sandbox.limits.disk) ?? Infinity;
  // Listed a good way past the limit, so the biggest paths named are right for a folder
  // somewhat over it; a whole home folder is not walked to be refused.
  const listing = listFolder(root, { exclude, stopAfterBytes: 4 * Math.min(limit, disk) });
  const over = listing.truncated ? 'more than ' : '';
  const biggest = () =>
    biggestPaths(listing)
      .map((b) => `${b.path} ${formatBytes(b.bytes)}`)
      .join(', ') + (listing.truncated ? ' (of what was listed before stopping)' : '');
  if (listing.bytes > limit)
    return err(
      appError(
        'invalid_input',
        `${root} holds ${over}${formatBytes(listing.bytes)} of files, over the import limit of ${formatBytes(limit)} (workspace.import_limit, default ${DEFAULT_IMPORT_LIMIT}). Biggest: ${biggest()}. Leave them out (in a git checkout, .gitignore them; or point workspace.from at a smaller folder), or raise the limit: --import-limit 2g, or "workspace": {"import_limit": "2g"} in the task file`,
      ),
    );
  if (listing.bytes > disk)
    return err(
      appError(
        'invalid_input',
        `${root} holds ${over}${formatBytes(listing.bytes)} of files, more than the sandbox's workspace holds (sandbox.limits.disk ${String(task.sandbox.limits.disk)}). Biggest: ${biggest()}. Raise sandbox.limits.disk in the task file (stepbox task init ${root} writes one to edit), or leave the biggest paths out`,
      ),
    );
  // Snapshots leave out files over their cap: one imported could not come back in a fork.
  const huge = listing.entries.filter((e) => e.type === 'file' && e.size > SNAPSHOT_FILE_CAP_BYTES);
  if (huge.length)
    return err(
      appError(
        'invalid_input',
        `${root} holds files over ${formatBytes(SNAPSHOT_FILE_CAP_BYTES)}, the largest a snapshot keeps: ${huge
          .slice(0, 5)
          .map((e) => `${e.path} ${formatBytes(e.size)}`)
          .join(
            ', ',
          )}. Leave them out (.gitignore them in a git checkout, or point workspace.from at a folder without them)`,
      ),
    );
  return ok(listing);
}

/** One line per fact a person should see about a folder's import, skipped paths listed. */
export function listingNotes(listing: FolderListing): string[] {
  const files = listing.entries.filter((e) => e.type === 'file').length;
  const how = listing.mode === 'git' ? 'the files git sees' : 'every file';
  return [
    `workspace from ${listing.root}: ${files} files, ${formatBytes(listing.bytes)} (${how})`,
    ...listing.notes,
    // A folder may hold any number of paths to skip (links, sockets): named up to MOST_LINES.
    ...cappedLines(listing.skipped, (s) => `skipped ${s.path}: ${s.why}`, 'skipped path'),
  ];
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
