import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { appError, type AppError } from '../../../shared/errors.js';
import { err, ok, type Result } from '../../../shared/result.js';
import type { TaskInput } from '../../../shared/task.js';
import { jsonSyntaxWhere, notParsedMessage } from '../json-error.js';
import { outsideBuildContext, readWorldFile } from '../folder-files.js';
import { cappedLines, shownKey } from '../../../shared/validation-issues.js';
import { shellJoin } from '../tools/shell-quote.js';

/**
 * A project's development container (`.devcontainer/devcontainer.json` or
 * `.devcontainer.json`, the convention editors share) read as a stepbox world: its image or
 * Dockerfile, environment, lifecycle commands and workspace folder. What a sandbox cannot
 * honour (ports, features, mounts, privileges, another user, …) is listed, never dropped
 * silently.
 */

/** The devcontainer.json of a folder, or null when it has none. */
export function findDevcontainer(dir: string): string | null {
  for (const candidate of [join(dir, '.devcontainer', 'devcontainer.json'), join(dir, '.devcontainer.json')])
    if (isFile(candidate)) return candidate;
  return null;
}

/** Keys read and honoured (or harmless to leave: a name, editor settings). */
const HONOURED = new Set([
  'name',
  'image',
  'build',
  'dockerFile',
  'context',
  'containerEnv',
  'remoteEnv',
  'onCreateCommand',
  'updateContentCommand',
  'postCreateCommand',
  'postStartCommand',
  'workspaceFolder',
  'customizations',
  '$schema',
]);

/** The lifecycle commands run as the task's setup, in the order a devcontainer runs them. */
const LIFECYCLE = [
  'onCreateCommand',
  'updateContentCommand',
  'postCreateCommand',
  'postStartCommand',
] as const;

/** Why a key a sandbox cannot honour is left out, for the person reading the list. */
const WHY: Readonly<Record<string, string>> = {
  forwardPorts: 'the sandbox has no network',
  appPort: 'the sandbox has no network',
  portsAttributes: 'the sandbox has no network',
  otherPortsAttributes: 'the sandbox has no network',
  features: 'features install at build time from a registry; put their steps in the Dockerfile',
  mounts: 'nothing of the host is mounted into a sandbox',
  workspaceMount: 'the project folder is copied, never mounted',
  privileged: 'a sandbox never runs privileged',
  capAdd: 'a sandbox keeps no capabilities',
  securityOpt: 'a sandbox keeps its own security options',
  runArgs: 'stepbox makes the container itself',
  remoteUser: 'every command runs as the sandbox user (uid 1000)',
  containerUser: 'every command runs as the sandbox user (uid 1000)',
  updateRemoteUserUID: 'every command runs as the sandbox user (uid 1000)',
  initializeCommand: 'it would run on your machine, outside the sandbox',
  postAttachCommand: 'nothing attaches to a sandbox',
  dockerComposeFile: 'compose setups are not supported',
  service: 'compose setups are not supported',
  runServices: 'compose setups are not supported',
  overrideCommand: "the sandbox's main process is stepbox's",
  shutdownAction: 'stepbox removes its sandboxes itself',
  init: 'a sandbox always runs an init',
  hostRequirements: 'limits come from the task (sandbox.limits)',
  userEnvProbe: 'the environment is containerEnv and remoteEnv as written',
  waitFor: 'every lifecycle command runs before snapshot 0',
};

/** What a devcontainer.json makes: the task (before defaults) and the notes a person should see. */
export interface DevcontainerWorld {
  readonly input: TaskInput;
  /** What was read, then each of {@link warnings} as `warning: FILE: …` (the CLI's stderr). */
  readonly notes: readonly string[];
  /**
   * What of the file is left out, one short line each without the file's path (the window's
   * project card, step 0's task facts and the trace header say these; the notes the same lines).
   */
  readonly warnings: readonly string[];
  readonly file: string;
}

/**
 * The task `stepbox run DIR --goal …` makes of a folder with a devcontainer.json: its
 * `image`, or its `build.dockerfile`/`build.context` (`dockerFile`/`context` of old) built
 * (paths relative to the devcontainer.json's folder, made absolute), `containerEnv` and
 * `remoteEnv` as the sandbox's environment, the lifecycle commands up to `postStartCommand`
 * as setup (before snapshot 0), `workspaceFolder` as the working directory, and the project
 * folder as the workspace.
 */
export function readDevcontainer(
  dir: string,
  flags: { readonly goal?: string; readonly verify?: string },
): Result<DevcontainerWorld, AppError> {
  const file = findDevcontainer(dir);
  if (!file)
    return err(appError('not_found', `${dir} has no .devcontainer/devcontainer.json or .devcontainer.json`));
  // Never through a link (.devcontainer -> another project's, with its containerEnv secrets).
  const text = readWorldFile(dir, file);
  if (!text.ok) return text;
  const doc = parseJsonc(text.value, file);
  if (!doc.ok) return doc;
  const c = doc.value;
  const bad = (field: string, want: string) =>
    err(appError('invalid_task', `${file}: ${field}: expected ${want}; fix it in the file`));
  const base = dirname(file);
  const sandbox: Record<string, unknown> = {};
  const warnings: string[] = [];

  const build = c.build;
  if (build !== undefined && (typeof build !== 'object' || build === null || Array.isArray(build)))
    return bad('build', 'an object such as {"dockerfile": "Dockerfile", "context": ".."}');
  const b = (build ?? {}) as Record<string, unknown>;
  const dockerfile = b.dockerfile ?? b.dockerFile ?? c.dockerFile;
  const context = b.context ?? c.context ?? '.';
  if (dockerfile !== undefined) {
    if (typeof dockerfile !== 'string' || !dockerfile)
      return bad('build.dockerfile', 'a path to a Dockerfile');
    if (typeof context !== 'string' || !context) return bad('build.context', 'a path to a folder');
    // devcontainer.json names both relative to its own folder; a task's Dockerfile is relative to its context.
    const contextAbs = resolve(base, context);
    // The whole context goes to the engine and COPY takes any file of it: never past the
    // project (VS Code would build "context": "/" from the whole disk).
    const field =
      b.context !== undefined ? 'build.context' : c.context !== undefined ? 'context' : 'build.dockerfile';
    const outside = outsideBuildContext(
      dir,
      contextAbs,
      `${file}: ${field} ${JSON.stringify(context)}`,
      `name a folder inside the project ${dir} (".." from .devcontainer/ is the project itself), and put what the image needs there`,
      relative(contextAbs, resolve(base, dockerfile)),
    );
    if (outside) return err(outside);
    sandbox.build = { context: contextAbs, dockerfile: relative(contextAbs, resolve(base, dockerfile)) };
    warnings.push(
      ...cappedLines(
        Object.keys(b).filter((key) => !['dockerfile', 'dockerFile', 'context'].includes(key)),
        (key) => `build.${shownKey(key)} is not supported (the Dockerfile is built as it is); it is left out`,
        'build key',
      ),
    );
  } else if (typeof c.image === 'string' && c.image) sandbox.image = c.image;
  else if (c.image !== undefined) return bad('image', 'an image name such as "node:20"');
  else
    return err(
      appError(
        'invalid_task',
        `${file} names no image: add "image": "NAME" or "build": {"dockerfile": "Dockerfile"}${c.dockerComposeFile !== undefined ? ' (docker compose setups are not supported)' : ''}`,
      ),
    );

  const env: Record<string, string> = {};
  const substituted: string[] = [];
  for (const key of ['containerEnv', 'remoteEnv'] as const) {
    const v = c[key];
    if (v === undefined) continue;
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      return bad(key, 'an object of variable names to string values');
    for (const [name, value] of Object.entries(v as Record<string, unknown>)) {
      if (typeof value !== 'string') return bad(`${key}.${name}`, 'a string value');
      if (/\$\{[^}]*\}/.test(value)) substituted.push(`${key}.${shownKey(name)}`);
      env[name] = value;
    }
  }
  warnings.push(
    ...cappedLines(
      substituted,
      (v) => `${v} uses \${…} substitution, which stepbox does not expand; the value is kept as written`,
      'substituted variable',
    ),
  );
  if (Object.keys(env).length) sandbox.env = env;

  const project = basename(dir);
  if (c.workspaceFolder !== undefined) {
    if (typeof c.workspaceFolder !== 'string')
      return bad('workspaceFolder', 'an absolute path such as "/workspaces/app"');
    sandbox.workdir = c.workspaceFolder.replace(/\$\{localWorkspaceFolderBasename\}/g, project);
  }

  const setup: string[] = [];
  for (const key of LIFECYCLE) {
    const commands = lifecycleCommands(c[key]);
    if (commands === null) return bad(key, 'a command line, an array of arguments, or an object of either');
    setup.push(...commands);
  }

  // Keys stepbox knows and cannot honour, each with why; then the file's own (any number of
  // them, any name): named up to MOST_LINES, then counted.
  const left = Object.keys(c).filter((k) => !HONOURED.has(k));
  for (const key of left.filter((k) => Object.hasOwn(WHY, k)))
    warnings.push(`"${key}" is not honoured (${WHY[key]}); it is left out`);
  warnings.push(
    ...cappedLines(
      left.filter((k) => !Object.hasOwn(WHY, k)),
      (key) => `"${shownKey(key)}" is not honoured (stepbox does not know it); it is left out`,
      'unknown key',
    ),
  );

  const input: TaskInput = {
    name: typeof c.name === 'string' && c.name.trim() ? slug(c.name) : project || 'devcontainer',
    goal: flags.goal ?? '',
    sandbox,
    workspace: { from: dir, setup },
    ...(flags.verify ? { verifier: { command: flags.verify } } : {}),
  };
  const notes = [
    `devcontainer ${file}: ${sandbox.build ? `image built from ${resolve(base, String(dockerfile))}` : `image ${String(sandbox.image)}`}` +
      `${sandbox.workdir ? `, working directory ${String(sandbox.workdir)}` : ''}${setup.length ? `, ${setup.length} setup command(s)` : ''}`,
    ...warnings.map((w) => `warning: ${file}: ${w}`),
  ];
  return ok({ input, notes, warnings, file });
}

/** A lifecycle command as setup lines: a string (a shell line), an array (argv), or an object of either (each, in order); null when malformed. */
function lifecycleCommands(v: unknown): string[] | null {
  if (v === undefined) return [];
  if (typeof v === 'string') return v.trim() ? [v] : [];
  if (Array.isArray(v))
    return v.every((a) => typeof a === 'string') ? (v.length ? [shellJoin(v)] : []) : null;
  if (typeof v === 'object' && v !== null) {
    const out: string[] = [];
    for (const part of Object.values(v)) {
      const lines = lifecycleCommands(part);
      if (lines === null || (typeof part === 'object' && part !== null && !Array.isArray(part))) return null;
      out.push(...lines);
    }
    return out;
  }
  return null;
}

/** A task name from a devcontainer's display name. */
function slug(name: string): string {
  return name.trim().replace(/\s+/g, '-');
}

/**
 * JSON with comments (`//`, `/* *\/`) and trailing commas, as devcontainer.json is written:
 * comments and trailing commas become spaces (so positions stay), then JSON.parse. A file
 * that is not JSONC names its line and column.
 */
export function parseJsonc(text: string, file: string): Result<Record<string, unknown>, AppError> {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out.push(text.slice(i, j + 1));
      i = j + 1;
    } else if (ch === '/' && text[i + 1] === '/') {
      let j = i;
      while (j < n && text[j] !== '\n') j++;
      out.push(' '.repeat(j - i));
      i = j;
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const j = end < 0 ? n : end + 2;
      out.push(text.slice(i, j).replace(/[^\n]/g, ' '));
      i = j;
    } else {
      out.push(ch);
      i++;
    }
  }
  const stripped = withoutTrailingCommas(out.join(''));
  let doc: unknown;
  try {
    doc = JSON.parse(stripped);
  } catch (e) {
    return err(
      appError(
        'invalid_task',
        notParsedMessage(
          file,
          'JSON with comments',
          jsonSyntaxWhere(e, stripped),
          'fix it there (keys and strings in double quotes, a comma between entries; comments and trailing commas are fine)',
        ),
      ),
    );
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return err(
      appError(
        'invalid_task',
        `${file} is not an object: a devcontainer.json is {"image": …} or {"build": …}`,
      ),
    );
  return ok(doc as Record<string, unknown>);
}

/** A comma followed (past blanks) by a closing bracket, outside strings, blanked. */
function withoutTrailingCommas(text: string): string {
  const chars = text.split('');
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === '"') {
      i++;
      while (i < chars.length && chars[i] !== '"') i += chars[i] === '\\' ? 2 : 1;
    } else if (chars[i] === ',') {
      let j = i + 1;
      while (j < chars.length && /\s/.test(chars[j])) j++;
      if (chars[j] === '}' || chars[j] === ']') chars[i] = ' ';
    }
  }
  return chars.join('');
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}
