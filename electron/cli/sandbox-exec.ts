import { parseArgs } from 'node:util';
import { parseSize } from '../../shared/size.js';
import { Task } from '../../shared/task.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { Engine } from '../engine/open-engine.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import type { Sandbox } from '../engine/sandbox/sandbox.js';
import { TaskMemory } from '../engine/tools/memory.js';
import { createToolRegistry } from '../engine/tools/registry.js';
import { shellJoin } from '../engine/tools/shell-quote.js';
import type { CliCommand, CliIo } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliError } from './episode-cli.js';
import { onInterrupt } from '../engine/interrupt.js';
import { intFlag, numberFlag } from './number-flags.js';
import { RUNTIME_FLAG, RUNTIME_HELP, runtimeFlag } from './runtime-flag.js';

const HELP = `stepbox sandbox exec [--json] [--timeout S] [--memory SIZE] [--pids N] [--runtime NAME]
                     -- CMD...

Runs a command through the execute_shell tool in a fresh sandbox (default limits:
1 CPU, 1g memory, 256 pids, 1g /workspace, no network; cwd /workspace), prints the
tool result and destroys the sandbox.
One argument after -- is a shell command line; several are shell-quoted and joined,
so they reach the program unchanged (argv semantics, as docker exec).

Options:
  --json          print the tool result object alone ({ok, exit_code, stdout, stderr, …})
  --timeout S     seconds before the command is killed (default 60); then error.code "timeout"
  --memory SIZE   memory limit, Docker size syntax (default 1g)
  --pids N        process limit (default 256)
${RUNTIME_HELP}

Exit 0 when the result is ok with exit_code 0, 1 otherwise, 3 without Docker or the image.

Examples:
  npx stepbox sandbox exec --json -- id -u
  npx stepbox sandbox exec -- printf '%s\\n' 'a b' c
  npx stepbox sandbox exec --timeout 2 -- 'sleep 10; echo never'
`;

/** The command line `execute_shell` runs: one argument as is, several shell-quoted and joined. */
export function commandLine(words: readonly string[]): string {
  return words.length === 1 ? words[0] : shellJoin(words);
}

/** What the flags ask for, validated. */
export interface ExecOptions {
  readonly json: boolean;
  readonly timeoutS?: number;
  readonly memory?: string;
  readonly pids?: number;
  readonly runtime?: string;
  readonly command: string;
}

/** Parses `sandbox exec` arguments; throws {@link UsageError} naming what is wrong. */
export function parseExecArgs(argv: string[]): ExecOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        json: { type: 'boolean', default: false },
        timeout: { type: 'string' },
        memory: { type: 'string' },
        pids: { type: 'string' },
        ...RUNTIME_FLAG,
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    throw new UsageError(`${(e as Error).message} (put the command after --)`);
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0 || (positionals.length === 1 && positionals[0].trim() === ''))
    throw new UsageError('no command: give it after --, e.g. `stepbox sandbox exec -- id -u`');
  const timeoutS = numberFlag('timeout', values.timeout, { positive: true, unit: 'seconds' });
  if (values.memory !== undefined && parseSize(values.memory) === null)
    throw new UsageError(`--memory: "${values.memory}" is not a Docker size such as 512m or 1g`);
  const pids = intFlag('pids', values.pids, { min: 1 });
  const runtime = runtimeFlag(values.runtime);
  return {
    json: values.json,
    command: commandLine(positionals),
    ...(timeoutS === undefined ? {} : { timeoutS }),
    ...(values.memory === undefined ? {} : { memory: values.memory }),
    ...(pids === undefined ? {} : { pids }),
    ...(runtime === undefined ? {} : { runtime }),
  };
}

/** The one-tool task `sandbox exec` runs under: default limits, the flags' overrides. */
export function execTask(options: ExecOptions): Task {
  // A --timeout above the defaults raises the per-tool and hard step limits with it, so it is the effective one.
  const seconds = Math.max(options.timeoutS ?? 60, 60);
  return Task.parse({
    name: 'sandbox-exec',
    goal: 'run one command',
    tools: ['execute_shell'],
    sandbox: {
      ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
      limits: {
        ...(options.memory === undefined ? {} : { memory: options.memory }),
        ...(options.pids === undefined ? {} : { pids: options.pids }),
      },
    },
    timeouts: { tools: { default: seconds, execute_shell: seconds }, step_hard: seconds },
  });
}

/**
 * Runs `body` with a fresh default-limits sandbox and destroys it afterwards, also on
 * Ctrl+C or SIGTERM (exit 130) — even one that arrives while the container is still
 * being created. Shared by `sandbox exec` and `sandbox shell`.
 */
export async function withFreshSandbox<T>(
  task: Task,
  io: CliIo,
  body: (sandbox: Sandbox, engine: Engine) => Promise<T>,
): Promise<T> {
  let engine: Engine | undefined;
  let creating: Promise<Sandbox> | undefined;
  let interrupted = false;
  const uninstall = onInterrupt(() => {
    interrupted = true;
    io.stderr.write('\nstepbox: interrupted; destroying the sandbox\n');
    void cleanUpAfterSignal(engine, creating, io).finally(() => process.exit(130));
  });
  let sandbox: Sandbox;
  try {
    try {
      // The CLI's one engine (orphaned containers removed on connecting, as every command does).
      engine = cliEngine(io);
      const provider = await engine.provider();
      creating = provider.create(sandboxConfig(task.sandbox));
      sandbox = await creating;
    } catch (e) {
      await engine?.close().catch(() => undefined);
      throw cliError(e);
    }
    try {
      return await body(sandbox, engine);
    } finally {
      await sandbox
        .destroy()
        .catch((e: Error) => io.stderr.write(`stepbox: could not destroy the sandbox: ${e.message}\n`));
      await engine.close();
    }
  } finally {
    // After a signal the handler stays, swallowing more Ctrl+C until the cleanup exits.
    if (!interrupted) uninstall();
  }
}

/** After a signal: let a create in flight settle, then remove every container this process owns. */
async function cleanUpAfterSignal(
  engine: Engine | undefined,
  creating: Promise<Sandbox> | undefined,
  io: CliIo,
): Promise<void> {
  if (!engine) return;
  try {
    await creating?.catch(() => undefined);
    await engine.close();
    await engine.removeOwned();
  } catch (e) {
    io.stderr.write(`stepbox: cleanup after the interrupt failed: ${(e as Error).message}\n`);
  }
}

function printHuman(result: ToolResult, io: CliIo): void {
  if (result.stdout) io.stdout.write(result.stdout);
  if (result.stderr) io.stderr.write(result.stderr);
  if (result.truncated?.stdout || result.truncated?.stderr)
    io.stderr.write(`stepbox: output truncated (${result.bytes} bytes written in all)\n`);
  if (result.error) io.stderr.write(`stepbox sandbox exec: ${result.error.code}: ${result.error.message}\n`);
  else if (result.exit_code !== 0) io.stderr.write(`stepbox sandbox exec: exit code ${result.exit_code}\n`);
}

/** `stepbox sandbox exec` — one command through execute_shell in a fresh sandbox. */
export const command: CliCommand = {
  name: 'sandbox exec',
  summary: 'run a command through execute_shell in a fresh sandbox',
  help: HELP,
  async run(argv, io) {
    const options = parseExecArgs(argv);
    const task = execTask(options);
    const registry = createToolRegistry(task);
    const result = await withFreshSandbox(task, io, async (sandbox) => {
      const outcome = await registry.call(
        'execute_shell',
        options.timeoutS === undefined
          ? { command: options.command }
          : { command: options.command, timeout: options.timeoutS },
        {
          sandbox,
          memory: new TaskMemory(task.memory.initial),
          task,
          hardTimeoutMs: task.timeouts.step_hard * 1000,
          step: 1,
          callIndex: 0,
        },
      );
      return outcome.result;
    });
    if (options.json) io.stdout.write(JSON.stringify(result) + '\n');
    else printHuman(result, io);
    return result.ok && result.exit_code === 0 ? EXIT.ok : EXIT.failed;
  },
};
