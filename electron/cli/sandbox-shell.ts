import { parseArgs } from 'node:util';
import { workdirOf } from '../../shared/workdir.js';
import { SANDBOX_ENV } from '../../shared/constants.js';
import { Task } from '../../shared/task.js';
import type { CliCommand } from './command.js';
import { UsageError } from './command.js';
import { withFreshSandbox } from './sandbox-exec.js';
import { feedTerminal, wantsLineEditing } from './terminal-input.js';
import { RUNTIME_FLAG, RUNTIME_HELP, runtimeFlag } from './runtime-flag.js';

const HELP = `stepbox sandbox shell [--runtime NAME]

Opens an interactive bash on a TTY in a fresh sandbox (default limits, no network,
cwd /workspace) and destroys the sandbox when the shell exits. The terminal is put in
raw mode when stdin is a TTY and follows window resizes. Set STEPBOX_LOG=info to see
each command as the live terminal's history hook reports it.

Options:
${RUNTIME_HELP}

Exit code: the shell's.

Examples:
  npx stepbox sandbox shell
  printf 'id -u\\nexit\\n' | npx stepbox sandbox shell
`;

/** `stepbox sandbox shell` — an interactive TTY shell in a fresh sandbox. */
export const command: CliCommand = {
  name: 'sandbox shell',
  summary: 'interactive shell in a fresh sandbox (destroyed on exit)',
  help: HELP,
  rawTerminal: true,
  async run(argv, io) {
    let runtime: string | undefined;
    try {
      const { values } = parseArgs({
        args: argv,
        options: RUNTIME_FLAG,
        strict: true,
        allowPositionals: false,
      });
      runtime = values.runtime;
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const task = Task.parse({
      name: 'sandbox-shell',
      goal: 'interactive shell',
      sandbox: { ...(runtimeFlag(runtime) === undefined ? {} : { runtime }) },
    });
    const stdin = io.stdin as NodeJS.ReadStream;
    const stdout = io.stdout as NodeJS.WriteStream;
    const size = () => ({ cols: stdout.columns || 80, rows: stdout.rows || 24 });

    return withFreshSandbox(task, io, async (sandbox, engine) => {
      const term = await engine.terminal(sandbox.id, {
        ...size(),
        cwd: workdirOf(sandbox.config),
        env: { ...SANDBOX_ENV },
        lineEditing: wantsLineEditing(stdin),
      });
      const exited = new Promise<number | null>((resolve) => term.onExit(resolve));
      term.onData((data) => stdout.write(data));
      term.onCommand(({ reportedAt: _when, ...c }) => {
        // As a trace records it: without the engine's own clock of its report.
        if (io.env.STEPBOX_LOG === 'info' || io.env.STEPBOX_LOG === 'debug')
          io.stderr.write(`[terminal] human_command ${JSON.stringify(c)}\n`);
      });
      const onResize = () => {
        const { cols, rows } = size();
        void term
          .resize(cols, rows)
          .catch((e: Error) => io.stderr.write(`stepbox: resize failed: ${e.message}\n`));
      };
      const unfeed = feedTerminal(stdin, term);
      process.on('SIGWINCH', onResize);
      try {
        const code = await exited;
        return code ?? 1;
      } finally {
        process.off('SIGWINCH', onResize);
        unfeed();
        await term.close();
      }
    });
  },
};
