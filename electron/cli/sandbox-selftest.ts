import { parseArgs } from 'node:util';
import { openEngine } from '../engine/open-engine.js';
import { runSelftest } from '../engine/sandbox/selftest.js';
import type { CliCommand } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { EXIT } from './command.js';
import { cliError } from './episode-cli.js';
import { RUNTIME_FLAG, RUNTIME_HELP, runtimeFlag } from './runtime-flag.js';

const HELP = `stepbox sandbox selftest [--image IMAGE] [--runtime NAME] [--json]

Starts one sandbox on this machine's Docker engine (DOCKER_HOST or the local socket) and
tries what it must contain, one line per check: network (only loopback), read_only_root,
uid (1000, no other groups), capabilities (none, no-new-privileges), helper_channel (a
command cannot write, read, ptrace or signal the helper, and its result is its own),
verifier_channel (leftover processes cannot make a failing verifier pass), pid_limit,
memory (oom), disk (disk_full), output_cap and timeout.

Options:
  --image IMAGE     check a sandbox of IMAGE (a task's sandbox.image; any linux image of the
                    engine's platform: stepbox brings its own shell and python3); default the
                    stepbox image
  --json            print {ok, runtime, checks: [{id, ok, detail}]} on stdout
${RUNTIME_HELP}

Exit 0 when every check holds, 1 when one does not, 3 when no sandbox can start
(run \`stepbox doctor\` for the fix).

Examples:
  npx stepbox sandbox selftest
  npx stepbox sandbox selftest --image node:20-slim
  DOCKER_HOST=tcp://10.0.0.5:2375 npx stepbox sandbox selftest --json
  npx stepbox sandbox selftest --runtime runsc
`;

/** `stepbox sandbox selftest` — the sandbox's containment checks on this machine's engine. */
export const command: CliCommand = {
  name: 'sandbox selftest',
  summary: "check the sandbox's containment on this machine's engine",
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false }, image: { type: 'string' }, ...RUNTIME_FLAG },
        strict: true,
        allowPositionals: false,
      }),
    );
    const runtime = runtimeFlag(values.runtime);
    // No sweep: the selftest looks at this machine's engine; it removes nothing of others'.
    const engine = openEngine({ env: io.env, sweep: false });
    let report;
    try {
      report = await runSelftest(await engine.provider(), { image: values.image, runtime });
    } catch (e) {
      // No sandbox could start (no Docker, no image): exit 3 with the fix.
      throw cliError(e);
    } finally {
      await engine.close();
    }
    if (values.json) io.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else {
      if (report.runtime) io.stdout.write(`runtime ${report.runtime}\n`);
      const width = Math.max(...report.checks.map((c) => c.id.length));
      for (const c of report.checks)
        io.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.id.padEnd(width)}  ${c.detail}\n`);
    }
    if (!report.ok) {
      const failing = report.checks.filter((c) => !c.ok).map((c) => c.id);
      io.stderr.write(`stepbox sandbox selftest: ${failing.join(', ')} did not hold\n`);
      return EXIT.failed;
    }
    return EXIT.ok;
  },
};
