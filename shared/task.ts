import { z } from 'zod';
import { SANDBOX_IMAGE } from './constants.js';
import { didYouMean } from './did-you-mean.js';
import { parseSize } from './size.js';
import { BUILTIN_TOOLS, isBuiltinTool } from './tool-schemas.js';
import { err, ok, type Result } from './result.js';
import { appError, type AppError } from './errors.js';
import { parseCommandTemplate } from './command-template.js';
import { cappedLines, issueLine, shownKey } from './validation-issues.js';
import { workdirProblem } from './workdir.js';
import { boundedNumber, REWARD_LIMIT } from './rewards.js';

/** The largest size a task may ask for (1 PiB): past any machine, and within what the engine's int64 and a JS number hold exactly. */
export const MAX_SIZE_BYTES = 1024 ** 5;
const size = z
  .union([z.string(), z.number()])
  .refine((v) => parseSize(v) !== null, { message: 'expected a Docker size such as "512m" or "1g"' })
  .refine((v) => (parseSize(v) ?? 0) <= MAX_SIZE_BYTES, {
    message: 'more than any machine holds (at most 1 PiB); expected a size such as "4g"',
  });
/**
 * The longest timeout a task may set, in seconds (a week): the timers that enforce timeouts
 * (Node's and the sandbox's) hold at most 2^31-1 ms (24.8 days); past that they fired at once,
 * and a verifier could not run at all.
 */
export const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;
const seconds = z
  .number()
  .positive()
  .max(MAX_TIMEOUT_SECONDS, `at most ${MAX_TIMEOUT_SECONDS} seconds (a week)`);
/** Linux's PID_MAX_LIMIT: a pids limit above it is refused by the kernel when the sandbox starts. */
export const MAX_PIDS = 4194304;
/** Places a verifier folder cannot be: the sandbox's own mounts and the kernel's. */
const RESERVED_DIRS = [
  '/workspace',
  '/tmp',
  '/home',
  '/run',
  '/proc',
  '/sys',
  '/dev',
  '/opt/agent',
  '/etc',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  '/var',
];
/** A folder of the verifier's own inside the sandbox: absolute, not the root, not one of the sandbox's. */
const verifierDir = z
  .string()
  .regex(/^\/[^\0]+$/, 'an absolute path inside the sandbox, such as "/tests"')
  .refine((p) => !p.split('/').includes('..'), { message: 'a path without ".." parts' })
  .refine((p) => !RESERVED_DIRS.some((r) => p === r || p.startsWith(r + '/')), {
    message: `a folder of the verifier's own, outside ${RESERVED_DIRS.join(', ')}`,
  });
/** Where a verifier's `files` go when it names no `files_dir` (Harbor's /tests). */
export const DEFAULT_VERIFIER_FILES_DIR = '/tests';

/** Whether one of two absolute folders is the other or inside it. */
function nested(a: string, b: string): boolean {
  const x = a.replace(/\/+$/, '');
  const y = b.replace(/\/+$/, '');
  return x === y || x.startsWith(y + '/') || y.startsWith(x + '/');
}

/** A relative path of a verifier file: no absolute path, no ".." part. */
const relativeFile = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\0'), {
    message: 'a relative path without ".." parts, such as "test.sh"',
  });

/** A reward weight: bounded, so no weight times a reward overflows (shared/rewards.ts). */
const rewardWeight = boundedNumber(REWARD_LIMIT, 'a weight (such as 1 or -0.2)');

/** The discount of a task's rewards when it sets none (`rewards.gamma`). */
export const DEFAULT_GAMMA = 0.99;

/** Resource limits of a sandbox. Defaults: 1 CPU, 1g memory (swap = memory), 256 pids, 1g disk, 1m output per stream. */
export const Limits = z.strictObject({
  // Docker's smallest CPU share is 0.01; the most is the engine's CPU count (checked when the sandbox is made).
  cpus: z.number().min(0.01, 'at least 0.01 (the smallest CPU share Docker gives)').default(1),
  memory: size.default('1g'),
  pids: z.number().int().positive().max(MAX_PIDS, `at most ${MAX_PIDS} (Linux's limit)`).default(256),
  disk: size.default('1g'),
  output: size.default('1m'),
  /** Size of the $HOME tmpfs (counted in the memory cgroup like /tmp); unset: 512m (room for the shipped agents' caches). */
  home: size.optional(),
});
/** Resource limits of a sandbox. */
export type Limits = z.infer<typeof Limits>;

/** The sandbox section of a task. */
export const SandboxSpec = z.strictObject({
  image: z.string().min(1).default(SANDBOX_IMAGE),
  network: z.string().min(1).default('none'),
  limits: Limits.default(() => Limits.parse({})),
  reset_between_episodes: z.boolean().default(true),
  /**
   * Build the image from a Dockerfile instead of naming one: a Dockerfile or a folder holding
   * one (relative to the task file's folder), or `{context, dockerfile}`. Cached by the content
   * hash of the build context. A recorded task's build needs consent like any image.
   */
  build: z
    .union([
      z.string().min(1),
      z.strictObject({ context: z.string().min(1), dockerfile: z.string().min(1).optional() }),
    ])
    .optional(),
  /**
   * The working directory: the snapshotted, rolled-back, diffed place where the agent starts.
   * Unset: /workspace. The image's own files there are part of snapshot 0.
   */
  workdir: z
    .string()
    .regex(/^\/[^\0]*$/, 'an absolute path inside the sandbox, such as "/app"')
    .superRefine((path, ctx) => {
      const problem = workdirProblem(path);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  /**
   * Environment variables of the sandbox (a devcontainer's `containerEnv`): seen by every
   * command, setup and the verifier. HOME, TZ, LANG, USER and the Python pins stay stepbox's.
   */
  env: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits and _'),
      z.string(),
    )
    .optional(),
  /** The container runtime (an engine's runtime name, e.g. "runsc" for gVisor); unset: the engine's default. */
  runtime: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a runtime name the engine offers, such as "runsc" (gVisor)')
    .optional(),
});
/** The sandbox section of a task. */
export type SandboxSpec = z.infer<typeof SandboxSpec>;

/** A workspace file: text, or `{base64}` for bytes. */
export const WorkspaceFile = z.union([z.string(), z.strictObject({ base64: z.string() })]);
/** A workspace file. */
export type WorkspaceFile = z.infer<typeof WorkspaceFile>;

/** A tool the task defines: a shell command template with shell-quoted `{arg}` substitution. */
export const CustomTool = z.strictObject({
  name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/, 'tool names are letters, digits, _ and -'),
  description: z.string().default(''),
  parameters: z.record(z.string(), z.unknown()).default(() => ({ type: 'object', properties: {} })),
  command: z.string().min(1),
  /** memory key → JSON pointer into the tool's parsed stdout (or "" for the whole stdout). */
  writes_memory: z.record(z.string(), z.string()).optional(),
  /** The observation shown instead of the result when the call hits the hard timeout. */
  fallback: z.string().optional(),
  timeout: seconds.optional(),
});
/** A tool the task defines. */
export type CustomTool = z.infer<typeof CustomTool>;

/** Default tools when a task names none. */
export const DEFAULT_TOOLS = [
  'execute_shell',
  'read_file',
  'write_file',
  'list_dir',
  'memory_read',
  'memory_write',
] as const;

/** The task file (Contracts: Task file). Only `name` and `goal` are required. */
export const Task = z.strictObject({
  name: z.string().min(1),
  goal: z.string().min(1),
  sandbox: SandboxSpec.default(() => SandboxSpec.parse({})),
  workspace: z
    .strictObject({
      /**
       * A folder whose files seed the workspace (relative to the task file's folder): in a git
       * checkout the files git sees (tracked and untracked, ignored ones left out, `.git` kept),
       * otherwise every file. `files` are written over it, then `setup` runs.
       */
      from: z.string().min(1).optional(),
      /** The largest `from` folder copied in (Docker size syntax); unset: 1g. A bigger one is refused, naming its biggest paths. */
      import_limit: size.optional(),
      files: z.record(z.string(), WorkspaceFile).default({}),
      setup: z.array(z.string()).default([]),
    })
    .default({ files: {}, setup: [] }),
  tools: z
    .array(
      z.union([
        z.string().refine(isBuiltinTool, {
          message: `unknown built-in tool; built-ins are ${Object.keys(BUILTIN_TOOLS).join(', ')}`,
        }),
        CustomTool,
      ]),
    )
    .default(() => [...DEFAULT_TOOLS]),
  timeouts: z
    .strictObject({
      tools: z.record(z.string(), seconds).default({ default: 30, execute_shell: 60 }),
      step_soft: seconds.default(20),
      step_hard: seconds.default(60),
      episode: seconds.default(600),
    })
    .default({ tools: { default: 30, execute_shell: 60 }, step_soft: 20, step_hard: 60, episode: 600 }),
  max_steps: z.number().int().positive().default(30),
  verifier: z
    .strictObject({
      command: z.string().min(1),
      timeout: seconds.default(60),
      /**
       * Files only the verifier sees (Harbor's `tests/`): written fresh into `files_dir` by the
       * verifier's own channel after every process of the agent is killed, removed after it;
       * never in the image, the workspace or reach of the agent before.
       */
      files: z.record(relativeFile, WorkspaceFile).optional(),
      /** Where `files` go (unset: /tests); an empty folder the agent cannot write while it works. */
      files_dir: verifierDir.optional(),
      /**
       * A folder emptied and handed to the verifier, in which it writes `reward.json` or
       * `reward.txt` (Harbor's /logs/verifier); when set, that reward decides the outcome
       * (1 passes) instead of the exit code. Out of the agent's reach while it works.
       */
      reward_dir: verifierDir.optional(),
    })
    .refine((v) => !v.reward_dir || !nested(v.reward_dir, v.files_dir ?? DEFAULT_VERIFIER_FILES_DIR), {
      message: 'reward_dir and files_dir must be folders apart (neither inside the other)',
      path: ['reward_dir'],
    })
    .nullable()
    .default(null),
  rewards: z
    .strictObject({
      /** component name → weight. Known: format_valid, repeated_action, tool_error, verifier. */
      components: z
        .record(z.string(), rewardWeight)
        .default({ format_valid: 0.1, repeated_action: -0.2, tool_error: -0.1, verifier: 1 }),
      gamma: z.number().min(0).max(1).default(DEFAULT_GAMMA),
    })
    .default({
      components: { format_valid: 0.1, repeated_action: -0.2, tool_error: -0.1, verifier: 1 },
      gamma: DEFAULT_GAMMA,
    }),
  memory: z
    .strictObject({
      initial: z.record(z.string(), z.unknown()).default({}),
      /** tool name → the memory keys it may write (memory_write may write any key). */
      writers: z.record(z.string(), z.array(z.string())).default({}),
      nullable: z.array(z.string()).default([]),
    })
    .default({ initial: {}, writers: {}, nullable: [] }),
  faults: z
    .strictObject({
      seed: z.number().int().default(1),
      latency: z.strictObject({ rate: z.number().min(0).max(1), seconds: seconds }).optional(),
      permission_error: z.number().min(0).max(1).default(0),
      tool_failure: z.number().min(0).max(1).default(0),
    })
    .default({ seed: 1, permission_error: 0, tool_failure: 0 }),
  qa: z
    .strictObject({
      protected: z.array(z.string()).default([]),
      editable: z.array(z.string()).default([]),
      /**
       * reward_hacking: a high reward with fewer tool calls than this is flagged. 1: a success
       * without a single action is suspicious; one command can be a whole, honest job.
       */
      min_actions: z.number().int().nonnegative().default(1),
      max_fallback_rate: z.number().min(0).max(1).default(0.3),
      expected_steps: z.number().int().positive().optional(),
      loop_repeats: z.number().int().min(2).default(3),
      loop_share: z.number().min(0).max(1).default(0.8),
      drift_steps: z.number().int().positive().default(5),
      high_reward: boundedNumber(REWARD_LIMIT, 'a reward (such as 0.5)').default(0.5),
      /** destructive_action: the share of the workspace's files one step may delete before it is flagged. */
      destructive_share: z.number().min(0).max(1).default(0.5),
      /** destructive_action: fewest files a step must delete to be flagged (a tiny workspace says little). */
      destructive_min_files: z.number().int().positive().default(3),
      /** output_flood: the share of a result's bytes that may be dropped by truncation before acting on it is flagged. */
      flood_share: z.number().min(0).max(1).default(0.5),
    })
    .default({
      protected: [],
      editable: [],
      min_actions: 1,
      max_fallback_rate: 0.3,
      loop_repeats: 3,
      loop_share: 0.8,
      drift_steps: 5,
      high_reward: 0.5,
      destructive_share: 0.5,
      destructive_min_files: 3,
      flood_share: 0.5,
    }),
});
/** A task with every default filled in. */
export type Task = z.infer<typeof Task>;
/** A task as written in a file, before defaults. */
export type TaskInput = z.input<typeof Task>;

/** The keys a (possibly wrapped) zod object schema accepts, for did-you-mean. */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: z.ZodType | undefined = schema;
  for (const key of path) {
    s = unwrap(s);
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, z.ZodType>)[String(key)];
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else if (s instanceof z.ZodUnion)
      s = (s.options as z.ZodType[]).find((o) => unwrap(o) instanceof z.ZodObject);
    else if (s instanceof z.ZodRecord) s = s.valueType as z.ZodType;
    else return [];
    if (!s) return [];
  }
  s = unwrap(s);
  if (s instanceof z.ZodUnion)
    s = (s.options as z.ZodType[]).map(unwrap).find((o) => o instanceof z.ZodObject);
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

function unwrap(s: z.ZodType): z.ZodType {
  let cur = s;
  while (cur instanceof z.ZodDefault || cur instanceof z.ZodOptional || cur instanceof z.ZodNullable) {
    cur = cur.unwrap() as z.ZodType;
  }
  return cur;
}

/**
 * Formats zod issues on a task into lines naming the field, what is wrong and the fix: the
 * first MOST_LINES (validation-issues.ts) of them, then how many more (a file may hold 50,000 unknown keys),
 * each key as {@link shownKey} shows it.
 */
export function describeTaskIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines = issues.flatMap((issue) => {
    if (issue.code !== 'unrecognized_keys') return [() => issueLine(issue)];
    const where = issue.path.map((k) => shownKey(String(k))).join('.');
    const known = knownKeys(Task, issue.path);
    return issue.keys.map((k) => () => {
      const guess = didYouMean(k, known);
      const field = issue.path.length ? `${where}.${shownKey(k)}` : shownKey(k);
      return `${field}: unknown key${guess ? ` — did you mean "${guess}"?` : ''} (allowed: ${known.join(', ')})`;
    });
  });
  return cappedLines(lines, (line) => line(), 'problem');
}

/** Parses a task document, filling defaults; errors name each field and suggest the fix. */
export function parseTask(input: unknown, source = 'task'): Result<Task, AppError> {
  const parsed = Task.safeParse(input);
  if (parsed.success) {
    const names = new Set<string>();
    for (const [i, t] of parsed.data.tools.entries()) {
      const n = typeof t === 'string' ? t : t.name;
      if (names.has(n)) return err(appError('invalid_task', `${source}: tools: "${n}" is listed twice`));
      names.add(n);
      if (typeof t === 'string') continue;
      const template = parseCommandTemplate(t.command, declaredParameters(t));
      if (!template.ok)
        return err(appError('invalid_task', `${source}: tools.${i}.command ("${n}"): ${template.message}`));
    }
    return ok(parsed.data);
  }
  const lines = describeTaskIssues(parsed.error.issues);
  return err(appError('invalid_task', `${source} is not a valid task:\n  ${lines.join('\n  ')}`));
}

/** The parameter names a custom tool declares: the placeholders its command may use. */
export function declaredParameters(tool: CustomTool): string[] {
  const properties = tool.parameters.properties;
  return properties && typeof properties === 'object' ? Object.keys(properties) : [];
}

/** The names of the tools a task enables, in order. */
export function taskToolNames(task: Task): string[] {
  return task.tools.map((t) => (typeof t === 'string' ? t : t.name));
}
