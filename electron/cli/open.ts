import { parseArgs } from 'node:util';
import { SANDBOX_ENV } from '../../shared/constants.js';
import { openBranchController } from '../engine/harness/episode-factory.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError, closeOnSignals } from './episode-cli.js';
import { intFlag } from './number-flags.js';
import { parseOrUsage } from './parse-or-usage.js';
import { jsonTerminalSafe, terminalSafe } from '../../shared/terminal-text.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';
import { feedTerminal, wantsLineEditing } from './terminal-input.js';

const HELP = `stepbox open EPISODE [--at K] [--exec CMD] [--json] [--allow-network] [--allow-image]
                    [--allow-limits] [--trust-recorded-task]

Opens a shell in a fresh sandbox restored to step K of EPISODE (an episode or branch id):
the workspace as snapshot K recorded it, and the agent's shell session's cwd and
exported variables. Default K: the last complete step. Nothing is recorded: the
episode stays as it was. The sandbox is destroyed when the shell exits.

Options:
  --at K        the step (0 = the workspace after setup)
  --exec CMD    run one command in the restored session instead of a shell, print its
                output and exit with its exit code (--json: the tool result)
${CONSENT_HELP}

Examples:
  npx stepbox open ep-20260101-120000-ab12 --at 3
  npx stepbox open ep-20260101-120000-ab12 --at 3 --exec 'ls -la && cat greet.py'
`;

/** `stepbox open` — a shell (or one command) in a sandbox restored to step K. */
export const command: CliCommand = {
  name: 'open',
  summary: 'open a shell in a fresh sandbox restored to step K of an episode',
  help: HELP,
  rawTerminal: true,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          at: { type: 'string' },
          exec: { type: 'string' },
          json: { type: 'boolean', default: false },
          ...CONSENT_FLAG_OPTIONS,
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give exactly one EPISODE (an episode or branch id)');
    const at = intFlag('at', values.at);
    const engine = cliEngine(io);
    const env = await cliEpisodeEnv(engine);
    let controller: EpisodeRunner | null = null;
    const uninstall = closeOnSignals(io, () => controller, engine);
    try {
      controller = await openBranchController({
        id: positionals[0],
        at,
        ...env,
        consent: consentFromFlags(values),
      }).catch((e: unknown) => {
        throw cliError(e);
      });
      const sandbox = controller.sandbox();
      if (!sandbox) throw new Error('the restored sandbox is gone');
      io.stderr.write(
        `${controller.branch} at step ${controller.currentStep()} (sandbox ${sandbox.id.slice(0, 12)})\n`,
      );
      if (values.exec !== undefined) {
        const r = await sandbox.exec({ command: values.exec, timeoutMs: 60_000 });
        // Only the interactive shell is raw: one command's output is printed made safe.
        if (values.json) io.stdout.write(jsonTerminalSafe(JSON.stringify(r)) + '\n');
        else {
          if (r.stdout) io.stdout.write(terminalSafe(r.stdout));
          if (r.stderr) io.stderr.write(terminalSafe(r.stderr));
          if (r.error) io.stderr.write(terminalSafe(`stepbox open: ${r.error.code}: ${r.error.message}\n`));
        }
        return r.ok ? (r.exit_code ?? EXIT.failed) : EXIT.failed;
      }
      const session = await sandbox.sessionState();
      const stdin = io.stdin as NodeJS.ReadStream;
      const stdout = io.stdout as NodeJS.WriteStream;
      const term = await engine.terminal(sandbox.id, {
        cols: stdout.columns || 80,
        rows: stdout.rows || 24,
        cwd: session.cwd,
        env: { ...SANDBOX_ENV, ...session.env },
        lineEditing: wantsLineEditing(stdin),
      });
      const exited = new Promise<number | null>((resolve) => term.onExit(resolve));
      term.onData((d) => stdout.write(d));
      const unfeed = feedTerminal(stdin, term);
      try {
        return (await exited) ?? EXIT.failed;
      } finally {
        unfeed();
        await term.close();
      }
    } finally {
      uninstall();
      await controller?.dispose();
      await engine.close();
    }
  },
};
