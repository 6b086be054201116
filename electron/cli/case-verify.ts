import { parseArgs } from 'node:util';
import { CaseError, caseNames, loadCase } from '../engine/cases/case-library.js';
import { runCase, type CaseRun } from '../engine/cases/case-runner.js';
import type { CliCommand } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError } from './episode-cli.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';
import { intFlag } from './number-flags.js';

const HELP = `stepbox case verify [NAME...] [--json] [--concurrency C] [--allow-network] [--allow-image]
                        [--allow-limits] [--trust-recorded-task]

Runs every case (or the NAMEd ones) and its fixed variant on Docker and checks that each case raises
exactly its expected rules at severity warning or worse, and each fixed variant none. Cases
of the store's library (stepbox case new) count like bundled ones; one without a fixed/
variant is judged on its broken run alone (fixed: null).

Options:
  --concurrency C  variants run at once (default 2)
  --json           print {ok, cases: [{name, ok, broken: {raised, expected, ok, episodes},
                   fixed: {raised, ok, episodes}}]}
A library case is a recorded task: what its task asks beyond the default sandbox needs consent:
${CONSENT_HELP}

Exit 0 only when every case and every fix behaved as expected; 1 otherwise; 3 without Docker.

Examples:
  stepbox case verify --json
  stepbox case verify output-flood network-assumed
`;

function summary(run: CaseRun) {
  return {
    raised: run.raised,
    expected: run.expected,
    ok: run.ok,
    episodes: run.episodes.map((e) => ({
      episode: e.episode,
      status: e.status,
      end_reason: e.end_reason,
      quality: e.quality,
    })),
  };
}

/** `stepbox case verify` — every case reproduces, every fix is clean. */
export const command: CliCommand = {
  name: 'case verify',
  summary: 'run every case and its fix; exit 0 only when all behave as expected',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          json: { type: 'boolean', default: false },
          concurrency: { type: 'string' },
          ...CONSENT_FLAG_OPTIONS,
        },
      }),
    );
    const concurrency = intFlag('concurrency', values.concurrency, { min: 1 }) ?? 2;
    const names = positionals.length > 0 ? [...new Set(positionals)] : caseNames();
    let specs;
    try {
      // A case saved from an episode has no fixed variant until its author writes one.
      specs = names.flatMap((name) => {
        const broken = loadCase(name);
        return broken.hasFixed ? [broken, loadCase(name, { fixed: true })] : [broken];
      });
    } catch (e) {
      if (e instanceof CaseError) throw new UsageError(e.message);
      throw e;
    }
    const consent = consentFromFlags(values);
    const engine = cliEngine(io);
    const { supply } = await cliEpisodeEnv(engine);
    const store = engine.store;
    const runs = new Map<string, CaseRun>();
    try {
      let next = 0;
      const worker = async () => {
        while (next < specs.length) {
          const spec = specs[next++];
          const run = await runCase(spec, {
            store,
            index: engine.index,
            parts: engine.parts,
            supply,
            consent,
          }).catch((e: unknown) => {
            throw cliError(e);
          });
          runs.set(`${spec.name}|${spec.fixed}`, run);
          io.stderr.write(
            `${run.ok ? 'ok  ' : 'FAIL'} ${spec.name}${spec.fixed ? ' (fixed)' : ''}: raised [${run.raised.join(', ')}]\n`,
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
    } finally {
      await engine.close();
    }
    const cases = names.map((name) => {
      const broken = runs.get(`${name}|false`)!;
      const fixed = runs.get(`${name}|true`);
      const f = fixed ? summary(fixed) : null;
      return {
        name,
        ok: broken.ok && (fixed?.ok ?? true),
        broken: summary(broken),
        fixed: f ? { raised: f.raised, ok: f.ok, episodes: f.episodes } : null,
      };
    });
    const ok = cases.every((c) => c.ok);
    if (values.json) io.stdout.write(JSON.stringify({ ok, cases }, null, 2) + '\n');
    else {
      for (const c of cases)
        io.stdout.write(
          `${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(28)} raised [${c.broken.raised.join(', ')}] expected [${c.broken.expected.join(', ')}]; ${c.fixed ? `fixed raised [${c.fixed.raised.join(', ')}]` : 'no fixed variant'}\n`,
        );
      io.stdout.write(
        ok ? `all ${cases.length} cases behave as expected\n` : 'some cases did not behave as expected\n',
      );
    }
    return ok ? EXIT.ok : EXIT.failed;
  },
};
