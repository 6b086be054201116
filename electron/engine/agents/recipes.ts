import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { stepboxHome } from '../trace/episode-store.js';
import { AgentFailure } from './agent.js';
import type { InsideLaunch } from './inside-launch.js';
import { describeIssues } from '../../../shared/validation-issues.js';
import { canonicalJson } from '../../../shared/jcs.js';

/** A runtime a recipe can ask for: Node from npm (`node@22`, or an exact `node@22.23.5`). */
export const RUNTIME = /^node@(\d+)(\.\d+\.\d+)?$/;

/**
 * A recipe: how to run an agent people already use inside the sandbox. `package` names
 * the npm package: with `tarball` (`{version}` filled in), a platform binary taken out
 * of that tarball (`npm pack`), `bin` naming files in it; without, the package installed
 * with its dependencies (`npm install --omit=dev --ignore-scripts`), `bin` naming its
 * entry scripts (relative to the package), each run by the `runtime` (`node@22`: Node
 * from npm, shared between agents, `node` on the agent's PATH). `command` is run as
 * `sh -c` in /workspace; `env` and `home_files` (written into HOME; `@PORT@` and
 * `@MODEL@` filled in) point it at the episode's endpoint; `volatile` are regexes of what
 * every run of its tools prints differently (ignored when a re-run is compared).
 */
export const Recipe = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  description: z.string().default(''),
  package: z.strictObject({
    name: z.string().min(1),
    version: z.string().min(1),
    tarball: z.string().min(1).optional(),
    bin: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/, 'a file name'), z.string().min(1)),
  }),
  runtime: z
    .string()
    .regex(RUNTIME, 'a runtime such as "node@22" (Node from npm) or "node@22.23.5"')
    .optional(),
  command: z.string().min(1),
  env: z.record(z.string(), z.string()).default({}),
  home_files: z.record(z.string(), z.string()).default({}),
  volatile: z.array(z.string()).default([]),
});
/** A parsed recipe. */
export type Recipe = z.infer<typeof Recipe>;

/** What an install recorded beside its files (`install.json`). */
export interface InstallRecord {
  /** {@link recipeHash} of the recipe it was installed from. */
  readonly recipe_hash: string;
  /** Apparent size of the files put at /opt/agent. */
  readonly bytes: number;
  /** The exact runtime installed (`node@22.23.5`), or null. */
  readonly runtime: string | null;
  readonly installed_at: string;
}

/** An installed recipe: its version, the folder put at /opt/agent and what its install recorded. */
export interface InstalledRecipe {
  readonly name: string;
  readonly version: string;
  readonly dir: string;
  readonly recipe: Recipe;
  /** Null for an install made before install.json existed (its size and hash unknown). */
  readonly install: InstallRecord | null;
}

/** A recipe's hash (sha256 of its canonical JSON, 12 hex digits): what says an install is up to date. */
export function recipeHash(recipe: Recipe): string {
  return createHash('sha256').update(canonicalJson(recipe)).digest('hex').slice(0, 12);
}

/** The recipe with another package version (what `--version V` installs). */
export function atVersion(recipe: Recipe, version: string): Recipe {
  return { ...recipe, package: { ...recipe.package, version } };
}

/** The fields (`package.version`, `command`, …) in which two recipes differ. */
export function recipeDiffers(a: Recipe, b: Recipe): string[] {
  const out: string[] = [];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    const x = (a as Record<string, unknown>)[k];
    const y = (b as Record<string, unknown>)[k];
    if (k === 'package' && x && y) {
      const px = x as Record<string, unknown>;
      const py = y as Record<string, unknown>;
      for (const pk of [...new Set([...Object.keys(px), ...Object.keys(py)])].sort())
        if (canonicalJson(px[pk] ?? null) !== canonicalJson(py[pk] ?? null)) out.push(`package.${pk}`);
    } else if (canonicalJson(x ?? null) !== canonicalJson(y ?? null)) out.push(k);
  }
  return out;
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

/** The names of the user's own recipes (`$STEPBOX_HOME/agents/recipes`), shipped ones they override included. */
export function ownRecipeNames(home = stepboxHome()): Set<string> {
  const dir = recipeDirs(home)[0];
  if (!existsSync(dir)) return new Set();
  return new Set(
    readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => readRecipe(join(dir, f)).name),
  );
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

/** Reads and checks a recipe file; a bad one is a `bad_agent_spec` naming the file and the field. */
export function readRecipe(path: string): Recipe {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new AgentFailure('bad_agent_spec', `recipe ${path} is not JSON: ${(e as Error).message}`);
  }
  const r = Recipe.safeParse(raw);
  if (!r.success)
    throw new AgentFailure('bad_agent_spec', `recipe ${path}: ${describeIssues(r.error.issues)}`);
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

/** The installed versions of a recipe (sorted by name). */
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
      install: readInstallRecord(join(dir, version, 'install.json')),
    }));
}

function readInstallRecord(path: string): InstallRecord | null {
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as Partial<InstallRecord>;
    if (typeof r.recipe_hash !== 'string' || typeof r.bytes !== 'number') return null;
    return {
      recipe_hash: r.recipe_hash,
      bytes: r.bytes,
      runtime: typeof r.runtime === 'string' ? r.runtime : null,
      installed_at: typeof r.installed_at === 'string' ? r.installed_at : '',
    };
  } catch {
    return null; // an install from before install.json: size and hash unknown, never up to date
  }
}

/** True when `inst` was installed from `recipe` as it is now (at the installed version). */
export function upToDate(inst: InstalledRecipe, recipe: Recipe): boolean {
  return inst.install?.recipe_hash === recipeHash(atVersion(recipe, inst.version));
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
  // An edited recipe is never silently ignored: its install is refreshed first.
  if (!upToDate(pick, recipe))
    throw new AgentFailure(
      'bad_agent_spec',
      `the ${name} recipe changed since ${name}@${pick.version} was installed (${recipeDiffers(pick.recipe, atVersion(recipe, pick.version)).join(', ') || 'installed before recipes were hashed'}); update it with: stepbox agents add ${name}`,
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
