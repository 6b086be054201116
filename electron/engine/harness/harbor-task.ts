import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { appError, type AppError } from '../../../shared/errors.js';
import { err, ok, type Result } from '../../../shared/result.js';
import { MAX_TIMEOUT_SECONDS, parseTask, type Task, type TaskInput } from '../../../shared/task.js';
import { cappedLines, issueLine, shownKey } from '../../../shared/validation-issues.js';
import { outsideBuildContext, readFolderFiles, readWorldFile } from '../folder-files.js';
import { notParsedMessage, type SyntaxWhere } from '../json-error.js';

/**
 * Harbor's task folder (Terminal-Bench 2.0 and the datasets built for it), read as a stepbox
 * task: `instruction.md` is the goal, `environment/` (a Dockerfile, or `docker_image`) the
 * image, the Dockerfile's WORKDIR the working directory, `[agent]`/`[verifier]` timeouts and
 * `[environment]` cpus/memory/storage the limits; `tests/` become the verifier's files, put
 * in at /tests only after the agent ends, and `tests/test.sh` writes its reward in
 * /logs/verifier. `solution/solve.sh` is what `--agent oracle` runs.
 */

/** The file that marks a Harbor task folder. */
export const HARBOR_TASK_FILE = 'task.toml';
/** Harbor's instruction file: the goal. */
export const HARBOR_INSTRUCTION = 'instruction.md';
/** Where Harbor puts the tests, and where its verifier writes the reward. */
export const HARBOR_TESTS_DIR = '/tests';
export const HARBOR_REWARD_DIR = '/logs/verifier';
/** The network an `allow_internet = true` task gets (Docker's default bridge), with the user's consent. */
export const HARBOR_INTERNET_NETWORK = 'bridge';
/** Harbor's verifier timeout when task.toml names none. */
const HARBOR_VERIFIER_TIMEOUT_S = 600;

/** A Harbor task read as a stepbox task, with what stepbox could not honour listed. */
export interface HarborTask {
  readonly task: Task;
  /** The task.toml, as the task's path (relative paths such as `sandbox.build` resolve against its folder). */
  readonly taskPath: string;
  /** Keys of task.toml stepbox does not know or cannot honour, one line each (not fatal). */
  readonly notes: readonly string[];
  /** The folder of solution/solve.sh, or null (`--agent oracle` needs it). */
  readonly solutionDir: string | null;
}

/** True when `dir` is a Harbor task folder (it holds task.toml). */
export function isHarborTaskDir(dir: string): boolean {
  return existsSync(join(dir, HARBOR_TASK_FILE)) && isDir(dir);
}

/**
 * The Harbor task folders directly inside `dir` (a dataset), sorted by name; empty when
 * `dir` is itself a task or holds none.
 */
export function harborDatasetTasks(dir: string): string[] {
  if (!isDir(dir) || isHarborTaskDir(dir)) return [];
  return readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .sort()
    .map((name) => join(dir, name))
    .filter(isHarborTaskDir);
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const num = z.number().positive();
/** A timeout of task.toml: the bound of every task's timeouts, named at its key. */
const timeoutSec = num.max(MAX_TIMEOUT_SECONDS, `at most ${MAX_TIMEOUT_SECONDS} seconds (a week)`);
const size = z.string().regex(/^\s*\d+(\.\d+)?\s*[kKmMgG]\s*$/, 'a size such as "4G" or "512M"');

/** The keys of task.toml stepbox reads; the rest are listed by {@link unhonoured}. */
const HarborToml = z.looseObject({
  task: z.looseObject({ name: z.string().min(1).optional() }).optional(),
  verifier: z.looseObject({ timeout_sec: timeoutSec.optional() }).optional(),
  agent: z.looseObject({ timeout_sec: timeoutSec.optional() }).optional(),
  environment: z
    .looseObject({
      docker_image: z.string().min(1).optional(),
      build_timeout_sec: num.optional(),
      cpus: num.optional(),
      memory_mb: num.optional(),
      storage_mb: num.optional(),
      memory: size.optional(),
      storage: size.optional(),
      allow_internet: z.boolean().optional(),
    })
    .optional(),
});
type HarborToml = z.infer<typeof HarborToml>;

/** Harbor's keys by section: `true` stepbox honours it, `false` Harbor knows it but stepbox does not. */
const KNOWN: Readonly<Record<string, Readonly<Record<string, boolean>> | boolean>> = {
  version: true,
  schema_version: true,
  source: true,
  metadata: true, // free-form by design
  task: { name: true, description: true, authors: true, keywords: true },
  verifier: { timeout_sec: true, env: false, user: false, network_mode: false, allowed_hosts: false },
  agent: { timeout_sec: true, user: false, network_mode: false, allowed_hosts: false },
  environment: {
    build_timeout_sec: false, // the engine's build runs to its end (a failed one quotes its last lines)
    docker_image: true,
    cpus: true,
    memory_mb: true,
    storage_mb: true,
    memory: true,
    storage: true,
    allow_internet: true,
    gpus: false,
    gpu_types: false,
    network_mode: false,
    allowed_hosts: false,
    mcp_servers: false,
    env: false,
    skills_dir: false,
    healthcheck: false,
  },
  solution: { env: false },
};

/** One line per key of task.toml that stepbox does not know, or knows and does not honour. */
function unhonoured(doc: Record<string, unknown>): string[] {
  const notes: string[] = [];
  // The file's author makes as many unknown keys as they like: named up to MOST_LINES, then counted.
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(doc)) {
    const known = KNOWN[key];
    if (known === undefined) {
      unknown.push(`"${shownKey(key)}"`);
      continue;
    }
    if (typeof known === 'boolean' || !value || typeof value !== 'object' || Array.isArray(value)) continue;
    for (const sub of Object.keys(value)) {
      const honoured = known[sub];
      if (honoured === undefined) unknown.push(`[${key}] ${shownKey(sub)}`);
      else if (!honoured) notes.push(`task.toml: [${key}] ${sub} is not honoured by stepbox; ignored`);
    }
  }
  return [
    ...notes,
    ...cappedLines(
      unknown,
      (k) => `task.toml: unknown key ${k} (not one of Harbor's); ignored`,
      'unknown key',
    ),
  ];
}

/** Harbor's size ("4G", "512M") as a Docker size ("4g", "512m"). */
function dockerSize(s: string): string {
  return s.replace(/\s+/g, '').toLowerCase();
}

/**
 * The working directory a Dockerfile's last stage leaves (its last WORKDIR, relative ones
 * resolved against the one before), or null when it sets none or one stepbox cannot resolve
 * (a `$VARIABLE` in it).
 */
export function dockerfileWorkdir(dockerfile: string): string | null {
  let workdir: string | null = null;
  // Continuation lines joined, comments dropped: WORKDIR is one instruction per line.
  const lines = dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const raw of lines) {
    const line = raw.trim();
    if (/^FROM\s/i.test(line)) workdir = null;
    const m = /^WORKDIR\s+(.+)$/i.exec(line);
    if (!m) continue;
    let dir = m[1].trim().replace(/^(["'])(.*)\1$/, '$2');
    if (dir.includes('$')) return null;
    if (!dir.startsWith('/')) dir = `${workdir ?? ''}/${dir}`;
    workdir = dir.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
  }
  return workdir;
}

/**
 * Where smol-toml stopped and why: its error carries `line` and `column` (1-based), its
 * message's first line the reason after "Invalid TOML document: " (the lines after it quote
 * the file, left out as every parse error here leaves them).
 */
function tomlSyntaxWhere(e: unknown): SyntaxWhere {
  const { line, column } = (e ?? {}) as { line?: unknown; column?: unknown };
  const first = (e instanceof Error ? e.message : '').split('\n')[0];
  return {
    line: typeof line === 'number' ? line : null,
    column: typeof column === 'number' ? column : null,
    reason: first.replace(/^Invalid TOML document:\s*/, '') || null,
  };
}

/** What a task.toml's author changes, by what the parser met there: a header, a key, a value. */
function tomlFix(e: unknown, text: string): string {
  const line = (e as { line?: unknown } | null)?.line;
  const there = typeof line === 'number' ? (text.split(/\r?\n/)[line - 1] ?? '').trim() : '';
  const reason = e instanceof Error ? e.message : '';
  const sections = 'Harbor reads [task], [environment], [agent] and [verifier] tables of key = value lines';
  if (there.startsWith('[') && !/\]\s*(#.*)?$/.test(there))
    return `close the table header with "]" on its line, as in [environment]; ${sections}`;
  if (/in key|key/.test(reason))
    return `a key is letters, digits, "_" and "-", written key = value (quote any other: "my key" = 1); ${sections}`;
  if (/value|string/.test(reason))
    return `a value is a "quoted string", a number, true or false, or a [list], as in cpus = 2 or memory = "4G"; ${sections}`;
  return `fix it there; ${sections}, such as [environment] then cpus = 2`;
}

/** Options of {@link loadHarborTask}. */
export interface HarborOptions {
  /** The user consented to the network (`--allow-network`): an `allow_internet = true` task gets it. */
  readonly allowNetwork?: boolean;
}

/**
 * Reads a Harbor task folder into a stepbox task. Errors name the file or key and the fix;
 * keys stepbox does not know or honour are listed in `notes`, never fatal.
 */
export function loadHarborTask(dir: string, options: HarborOptions = {}): Result<HarborTask, AppError> {
  const tomlPath = join(dir, HARBOR_TASK_FILE);
  const bad = (message: string) => err(appError('invalid_task', message));
  // Every file and folder of the task is read only where it lies: a link to a file of this
  // machine (instruction.md -> /proc/self/environ, tests -> ~/.ssh) never becomes the task.
  const read = readWorldFile(dir, tomlPath);
  if (!read.ok) return read;
  const text = read.value;
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (e) {
    return bad(notParsedMessage(tomlPath, 'valid TOML', tomlSyntaxWhere(e), tomlFix(e, text)));
  }
  const parsed = HarborToml.safeParse(doc);
  if (!parsed.success)
    return bad(
      `${tomlPath}:\n  ${cappedLines(parsed.error.issues, (i) => issueLine(i), 'problem').join('\n  ')}`,
    );
  const toml: HarborToml = parsed.data;
  const notes = unhonoured(doc);

  const instruction = readWorldFile(dir, join(dir, HARBOR_INSTRUCTION));
  if (!instruction.ok)
    return instruction.error.code === 'not_found'
      ? bad(`${join(dir, HARBOR_INSTRUCTION)} is missing: a Harbor task's instruction is the agent's goal`)
      : instruction;
  const goal = instruction.value;
  if (goal.trim() === '')
    return bad(`${join(dir, HARBOR_INSTRUCTION)} is empty: write the instruction the agent is given`);

  const env = toml.environment ?? {};
  const sandbox: NonNullable<TaskInput['sandbox']> & Record<string, unknown> = {};
  const dockerfile = join(dir, 'environment', 'Dockerfile');
  const hasDockerfile = existsSync(dockerfile);
  // A prebuilt docker_image is the Dockerfile's image (Harbor builds only without one).
  if (env.docker_image) sandbox.image = env.docker_image;
  else if (hasDockerfile) sandbox.build = 'environment';
  else
    return bad(
      `${dir} has neither environment/Dockerfile nor [environment] docker_image in task.toml: name the task's image one of the two ways`,
    );
  let workdir: string | null = null;
  if (hasDockerfile) {
    // environment/ is the build's context: all of it goes to the engine, so it must be the task's own.
    const outside = outsideBuildContext(
      dir,
      join(dir, 'environment'),
      join(dir, 'environment/'),
      'put the folder itself there',
    );
    if (outside) return err(outside);
    const text = readWorldFile(dir, dockerfile);
    if (!text.ok) return text;
    // The agent works (and the image's files are snapshot 0) where the Dockerfile leaves it.
    workdir = dockerfileWorkdir(text.value);
  }
  if (workdir) sandbox.workdir = workdir;
  const limits: Record<string, unknown> = {};
  if (env.cpus !== undefined) limits.cpus = env.cpus;
  if (env.memory_mb !== undefined) limits.memory = `${Math.ceil(env.memory_mb)}m`;
  else if (env.memory !== undefined) limits.memory = dockerSize(env.memory);
  if (env.storage_mb !== undefined) limits.disk = `${Math.ceil(env.storage_mb)}m`;
  else if (env.storage !== undefined) limits.disk = dockerSize(env.storage);
  if (Object.keys(limits).length) sandbox.limits = limits;
  if (env.allow_internet === true) {
    if (options.allowNetwork) sandbox.network = HARBOR_INTERNET_NETWORK;
    else
      notes.push(
        'task.toml: [environment] allow_internet = true, but the sandbox stays offline without your consent; pass --allow-network to give it the network',
      );
  }

  const testsDir = join(dir, 'tests');
  if (!existsSync(join(testsDir, 'test.sh')))
    return bad(
      `${join(testsDir, 'test.sh')} is missing: a Harbor task's verifier is tests/test.sh, writing its reward to ${HARBOR_REWARD_DIR}/reward.txt`,
    );
  const tests = readFolderFiles(testsDir, testsDir, dir);
  if (!tests.ok) return tests;

  const agentTimeout = toml.agent?.timeout_sec;
  const input: TaskInput = {
    name: toml.task?.name ?? basename(dir),
    goal,
    sandbox,
    ...(agentTimeout !== undefined
      ? {
          // The agent's whole budget; a long command (a build, a solve.sh) may take all of it.
          timeouts: {
            episode: agentTimeout,
            step_hard: agentTimeout,
            tools: { default: 30, execute_shell: agentTimeout },
          },
        }
      : {}),
    verifier: {
      command: `bash ${HARBOR_TESTS_DIR}/test.sh`,
      timeout: toml.verifier?.timeout_sec ?? HARBOR_VERIFIER_TIMEOUT_S,
      files: tests.value,
      files_dir: HARBOR_TESTS_DIR,
      reward_dir: HARBOR_REWARD_DIR,
    },
  };
  const task = parseTask(input, tomlPath);
  if (!task.ok) return task;
  const solution = join(dir, 'solution');
  return ok({
    task: task.value,
    taskPath: tomlPath,
    notes,
    solutionDir: existsSync(join(solution, 'solve.sh')) ? solution : null,
  });
}
