import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { stepboxHome } from '../trace/episode-store.js';
import { AgentFailure } from './agent.js';
import type { InsideLaunch } from '../external/sandbox-agent.js';

/**
 * A recipe: how to run an agent people already use inside the sandbox. `package` says
 * which npm tarball holds its binaries (`{version}` filled in) and where they are in it;
 * `command` is run as `sh -c` in /workspace; `env` and `home_files` (written into HOME;
 * `@PORT@` and `@MODEL@` filled in) point it at the episode's endpoint; `volatile` are
 * regexes of what every run of its tools prints differently (ignored when a re-run is compared).
 */
export const Recipe = z.object({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  description: z.string().default(''),
  package: z.object({
    name: z.string(),
    version: z.string(),
    tarball: z.string(),
    bin: z.record(z.string(), z.string()),
  }),
  command: z.string().min(1),
  env: z.record(z.string(), z.string()).default({}),
  home_files: z.record(z.string(), z.string()).default({}),
  volatile: z.array(z.string()).default([]),
});
/** A parsed recipe. */
export type Recipe = z.infer<typeof Recipe>;

/** An installed recipe: its version and the folder put at /opt/agent. */
export interface InstalledRecipe {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly recipe: Recipe;
}

/** The bundled recipes folder (resources/agents/recipes), found from this module upwards. */
function bundledDir(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'resources', 'agents', 'recipes');
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** Where recipes are installed: `$STEPBOX_HOME/agents`. */
export function agentsHome(home = stepboxHome()): string {
  return join(home, 'agents');
}

/** The user's own recipes (`$STEPBOX_HOME/agents/recipes/NAME.json`) override the bundled ones. */
function recipeDirs(home: string): string[] {
  const bundled = bundledDir();
  return [join(agentsHome(home), 'recipes'), ...(bundled ? [bundled] : [])];
}

/** Every recipe known (user's first), by name. */
export function listRecipes(home = stepboxHome()): Recipe[] {
  const seen = new Map<string, Recipe>();
  for (const dir of recipeDirs(home)) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith('.json')) continue;
      const r = readRecipe(join(dir, f));
      if (!seen.has(r.name)) seen.set(r.name, r);
    }
  }
  return [...seen.values()];
}

function readRecipe(path: string): Recipe {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new AgentFailure('bad_agent_spec', `recipe ${path} is not JSON: ${(e as Error).message}`);
  }
  const r = Recipe.safeParse(raw);
  if (!r.success)
    throw new AgentFailure(
      'bad_agent_spec',
      `recipe ${path}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

/** The recipe named `name`; an unknown name lists the known ones. */
export function findRecipe(name: string, home = stepboxHome()): Recipe {
  const all = listRecipes(home);
  const r = all.find((x) => x.name === name);
  if (!r)
    throw new AgentFailure(
      'bad_agent_spec',
      `unknown agent "${name}": not an agent kind nor a recipe (recipes: ${all.map((x) => x.name).join(', ') || 'none'}); kinds: scripted:FILE, replay:EPISODE, openai:MODEL, manual, exec:CMD, sandbox:CMD`,
    );
  return r;
}

/** The installed versions of a recipe (newest last by install order of names). */
export function installed(name: string, home = stepboxHome()): InstalledRecipe[] {
  const dir = join(agentsHome(home), name);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((v) => existsSync(join(dir, v, 'recipe.json')) && existsSync(join(dir, v, 'opt')))
    .sort()
    .map((version) => ({
      name,
      version,
      dir: join(dir, version, 'opt'),
      recipe: readRecipe(join(dir, version, 'recipe.json')),
    }));
}

/** How `--agent NAME` runs: the installed recipe's command, env, HOME files and files. */
export function recipeLaunch(name: string, home = stepboxHome()): InsideLaunch {
  const recipe = findRecipe(name, home);
  const versions = installed(name, home);
  const pick = versions.find((v) => v.version === recipe.package.version) ?? versions.at(-1);
  if (!pick)
    throw new AgentFailure(
      'bad_agent_spec',
      `the ${name} agent is not installed; install it with: stepbox agents add ${name}`,
    );
  const r = pick.recipe;
  return {
    command: r.command,
    env: r.env,
    homeFiles: r.home_files,
    agentDir: pick.dir,
    volatile: r.volatile,
    recipe: `${name}@${pick.version}`,
  };
}

/**
 * Installs a recipe's pinned package into the store: `npm pack` of its tarball (npm's
 * own cache keeps the download, so CI caches `~/.npm`), unpacked, and only the binaries
 * the recipe names kept under `$STEPBOX_HOME/agents/NAME/VERSION/opt/bin`, with the recipe.
 */
export function addRecipe(
  name: string,
  version?: string,
  home = stepboxHome(),
  log: (line: string) => void = () => undefined,
): InstalledRecipe {
  const recipe = findRecipe(name, home);
  const v = version ?? recipe.package.version;
  const target = join(agentsHome(home), name, v);
  const done = installed(name, home).find((i) => i.version === v);
  if (done) return done;
  mkdirSync(agentsHome(home), { recursive: true });
  const tmp = mkdtempSync(join(agentsHome(home), '.tmp-'));
  try {
    const spec = recipe.package.tarball.replaceAll('{version}', v);
    log(`npm pack ${spec}`);
    const out = execFileSync('npm', ['pack', spec, '--pack-destination', tmp, '--silent'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
      .trim()
      .split('\n')
      .at(-1) as string;
    const unpacked = join(tmp, 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['xzf', join(tmp, out), '-C', unpacked]);
    const stage = join(tmp, 'stage');
    mkdirSync(join(stage, 'opt', 'bin'), { recursive: true });
    for (const [bin, path] of Object.entries(recipe.package.bin)) {
      const from = join(unpacked, 'package', path);
      if (!existsSync(from))
        throw new AgentFailure(
          'bad_agent_spec',
          `${spec} has no ${path}; the recipe's package.bin does not match this version`,
        );
      copyFileSync(from, join(stage, 'opt', 'bin', bin));
      chmodSync(join(stage, 'opt', 'bin', bin), 0o755);
    }
    writeFileSync(
      join(stage, 'recipe.json'),
      JSON.stringify({ ...recipe, package: { ...recipe.package, version: v } }, null, 2),
    );
    mkdirSync(dirname(target), { recursive: true });
    rmSync(target, { recursive: true, force: true });
    renameSync(stage, target);
  } catch (e) {
    if (e instanceof AgentFailure) throw e;
    const err = e as { stderr?: string; message: string };
    throw new AgentFailure(
      'install_failed',
      `cannot install ${name}@${v}: ${(err.stderr ?? '').trim().slice(-500) || err.message}; check that npm reaches its registry (or its cache holds the package)`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return installed(name, home).find((i) => i.version === v) as InstalledRecipe;
}
