import { parseArgs } from 'node:util';
import { runDoctor } from '../engine/doctor.js';
import { openEngine } from '../engine/open-engine.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { CliCommand } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { EXIT, InfraError } from './command.js';

const HELP = `stepbox doctor [--json]

Checks that a sandbox can start now: Docker reachable (bounded: 3 s), the sandbox image
present, its version label matching this build, a sandbox starting and running \`true\`;
and reports the store's disk use ($STEPBOX_HOME, default ~/.stepbox).
Each failing check names its fix.

Options:
  --json   print {ok, checks: [{id, ok, detail, fix}], store: {path, bytes}} on stdout

Exit 0 when every check passes, 3 otherwise.

Examples:
  npx stepbox doctor
  DOCKER_HOST=tcp://10.0.0.5:2375 npx stepbox doctor --json
`;

/** `stepbox doctor` — says whether a sandbox can start now and how to fix what stops it. */
export const command: CliCommand = {
  name: 'doctor',
  summary: 'check Docker, the sandbox image, a sandbox start and the store',
  help: HELP,
  async run(argv, io) {
    const { values } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: { json: { type: 'boolean', default: false } },
        strict: true,
        allowPositionals: false,
      }),
    );
    // No sweep: doctor only looks; it must not close traces or remove containers, even orphans.
    const engine = (() => {
      try {
        return openEngine({ env: io.env, sweep: false });
      } catch (e) {
        const home = stepboxHome(io.env);
        throw new InfraError(
          `the store at ${home} is not usable: ${(e as Error).message}`,
          `make ${home} writable, or set STEPBOX_HOME to a writable directory`,
        );
      }
    })();
    const report = await runDoctor(engine).finally(() => engine.close());
    if (values.json) {
      io.stdout.write(JSON.stringify(report, null, 2) + '\n');
    } else {
      const width = Math.max(...report.checks.map((c) => c.id.length));
      let lastFix = '';
      for (const c of report.checks) {
        io.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.id.padEnd(width)}  ${c.detail}\n`);
        if (c.ok) continue;
        io.stdout.write(
          `${' '.repeat(width + 8)}fix: ${c.fix === lastFix ? '(the same as above)' : c.fix}\n`,
        );
        lastFix = c.fix;
      }
      // The store's use and place are its check's line (`ok  store  0 B in …`): not said again.
      io.stdout.write(report.ok ? 'stepbox is ready: a sandbox can start now.\n' : '');
    }
    if (!report.ok) {
      const failing = report.checks.filter((c) => !c.ok);
      io.stderr.write(
        `stepbox doctor: ${failing.map((c) => c.id).join(', ')} failed. Fix: ${failing[0].fix}\n`,
      );
      return EXIT.infra;
    }
    return EXIT.ok;
  },
};
