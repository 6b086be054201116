import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root, from this file's location. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/stepbox.js', import.meta.url));

/**
 * The TypeScript projects the CLI is built from, each with the build-info file `tsc -b` writes
 * (or touches) whenever it brings the project's output up to date. A source newer than its
 * project's build info means dist/ is stale; nested projects are listed before their parents.
 */
const PROJECTS: readonly { readonly dir: string; readonly buildInfo: string }[] = [
  { dir: 'shared', buildInfo: 'dist/.tsbuild/shared.tsbuildinfo' },
  { dir: 'electron/engine', buildInfo: 'dist/.tsbuild/engine.tsbuildinfo' },
  { dir: 'electron', buildInfo: 'dist/.tsbuild/electron.tsbuildinfo' },
];

let buildProblem: string | null | undefined;

/**
 * Why the built CLI cannot be trusted to be the current source, or null: missing, or older
 * than a source file (a CLI test against a stale build would test yesterday's code). Checked
 * once per test process.
 */
export function cliBuildProblem(): string | null {
  if (buildProblem === undefined) buildProblem = buildProblemAt(PROJECT_ROOT);
  return buildProblem;
}

/** {@link cliBuildProblem} for the checkout at `root`, uncached. */
export function buildProblemAt(root: string): string | null {
  if (!existsSync(join(root, 'dist/electron/cli-main.js')))
    return 'the CLI is not built: run `npx tsc -b` (npm test builds first)';
  const seen = new Set<string>();
  for (const { dir, buildInfo } of PROJECTS) {
    const info = join(root, buildInfo);
    if (!existsSync(info)) return `the CLI build has no ${buildInfo}: run \`npx tsc -b\``;
    const newer = newerSource(join(root, dir), statSync(info).mtimeMs, seen);
    if (newer)
      return `the CLI in dist/ is older than ${relative(root, newer)}: run \`npx tsc -b\` (npm test builds first)`;
  }
  return null;
}

/** The first TypeScript source below `dir` (not yet seen) modified after `since`, or undefined. */
function newerSource(dir: string, since: number, seen: Set<string>): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (seen.has(path)) continue;
    seen.add(path);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules') continue;
      const found = newerSource(path, since, seen);
      if (found) return found;
    } else if (/\.(c|m)?tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      if (statSync(path).mtimeMs > since) return path;
    }
  }
  return undefined;
}

/** What a CLI run produced. */
export interface CliRun {
  readonly code: number | null;
  /** The signal that killed it, if one did. */
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

/** Options of {@link runCli}. */
export interface CliRunOptions {
  /** Added to (and overriding) the test process's environment. */
  readonly env?: Record<string, string | undefined>;
  /** Kill the child after this long (the run then fails with code null). */
  readonly timeoutMs?: number;
  readonly input?: string;
}

/**
 * Runs `node bin/stepbox.js ARGS` as a child process against the built dist/ (run
 * `npm run build` or `npx tsc -b` first; `npm test` builds before it tests).
 */
export function runCli(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  const problem = cliBuildProblem();
  if (problem) throw new Error(problem);
  return runNode(BIN, args, options);
}

/** Runs a Node script of the project (e.g. `scripts/test.js`, relative to the root) as a child process. */
export function runNode(
  script: string,
  args: readonly string[],
  options: CliRunOptions = {},
): Promise<CliRun> {
  return startNode(script, args, options).done;
}

/** A CLI child still running: its process (to signal it) and its eventual outcome. */
export interface CliChild {
  readonly child: ChildProcess;
  readonly done: Promise<CliRun>;
}

/** Starts a Node script of the project without waiting for it (a server, for instance). */
export function startNodeScript(
  script: string,
  args: readonly string[],
  options: CliRunOptions = {},
): CliChild {
  return startNode(script, args, options);
}

/** Starts `node bin/stepbox.js ARGS` without waiting for it (to interrupt it, for instance). */
export function startCli(args: readonly string[], options: CliRunOptions = {}): CliChild {
  const problem = cliBuildProblem();
  if (problem) throw new Error(problem);
  return startNode(BIN, args, options);
}

function startNode(script: string, args: readonly string[], options: CliRunOptions): CliChild {
  const started = performance.now();
  const child = spawn(process.execPath, [script, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, durationMs: performance.now() - started });
    });
    child.stdin.end(options.input ?? '');
  });
  return { child, done };
}

/** Parses the single JSON document a `--json` run printed, failing with the run's output when it is not one. */
export function parseJsonOutput<T = unknown>(run: CliRun): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(
      `stdout is not one JSON document (exit ${run.code}):\n${run.stdout}\nstderr:\n${run.stderr}`,
    );
  }
}

/** Resolves once `check` returns a value (polling, e.g. the files a child writes); rejects after `ms`. */
export async function waitFor<T>(what: string, check: () => T | null, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs the CLI's `main` in this process against `home` (no build needed): its exit code
 * and what it wrote. For tests of output and exit codes; `runCli` tests the real binary.
 */
export async function runMain(
  home: string,
  argv: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const { main } = await import('../../electron/cli.js');
  const { PassThrough } = await import('node:stream');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await main([...argv], {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: { ...process.env, STEPBOX_HOME: home, ...env },
  });
  return { code, out, err };
}

/**
 * Installs an agent recipe (`codex`, `claude-code`) into the store at `home` the way a
 * person does, `stepbox agents add NAME`; throws with the CLI's stderr if it fails. The
 * one place tests install recipes (npm's own cache keeps the download between them).
 */
export async function addAgentRecipe(home: string, name: string): Promise<void> {
  const added = await runCli(['agents', 'add', name, '--json'], {
    env: { STEPBOX_HOME: home },
    timeoutMs: 600_000,
  });
  if (added.code !== 0)
    throw new Error(`stepbox agents add ${name} exited with ${added.code}: ${added.stderr.trim()}`);
}
