import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { candidateSources } from '../engine/candidates/candidate-sources.js';
import { tryCandidates, type CandidateOutcome } from '../engine/candidates/try-candidates.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import {
  cliEngine,
  cliEpisodeEnv,
  cliError,
  describeEvent,
  episodeExit,
  episodeSummary,
} from './episode-cli.js';
import { intFlag } from './number-flags.js';
import { countOf } from '../../shared/count-of.js';
import { actionText, resultLine } from '../../shared/step-summary.js';
import { oneLine } from '../../shared/one-line.js';
import { parseOrUsage } from './parse-or-usage.js';
import { agentFlags } from './run.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';

const HELP = `stepbox candidates EPISODE --at K [--n N] [--from FILE] [--run-on M] [--pick I] [--json]
                          [--base-url URL] [--temperature T] [--seed N] [--allow-network] [--allow-image]
                          [--allow-limits] [--trust-recorded-task]

Tries candidate next actions after step K of EPISODE (an episode or branch id), each in
its own throwaway fork from snapshot K, in parallel, and shows them side by side: the
action, what it returned, the files it changed, its step reward and the QA flags it
raised. Candidates come from the branch's own agent (--n N decisions; a model endpoint is
asked N times with the seed varied, N, N+1, …; a script or a recording has one next
answer) and from FILE (JSONL, one assistant message per line, as a scripted agent).
Every candidate is a branch marked as one (header "candidate"); --pick I continues
candidate I to the end with the branch's agent and closes the others as rejected
alternatives (end_reason candidate_rejected; the choice is kept for
\`stepbox export --format dpo-jsonl\`). Without --pick all of them are closed
(candidate_not_picked) and stay as branches to fork from.

Options:
  --at K        the step the candidates follow (they are step K+1)
  --n N         candidates from the branch's agent (default 1 without --from, else 0)
  --from FILE   more candidates: JSONL, one assistant message per line
  --run-on M    let each candidate run M more steps with the branch's agent (default 0)
  --pick I      continue candidate I (0-based) to the end
  --seed N      the first seed of model candidates (default 0): it decides step K+1 only,
                run-on steps and a picked candidate go on at the episode's recorded seed;
                --base-url, --temperature as for run
${CONSENT_HELP}
  --json        print {candidates: [{branch, action, result, tree_hash, files_changed,
                reward, flags, index, origin, seed, steps_run, status}]} (with --pick also
                picked: {index, episode, branch, status, end_reason, steps, ...})

Exit: 0 (with --pick: the picked episode succeeded), 1 it did not, 2 usage, 3 no Docker.

Examples:
  stepbox candidates ep-20260101-120000-ab12 --at 5 --from alternatives.jsonl --json
  stepbox candidates ep-20260101-120000-ab12 --at 2 --n 4 --seed 7 --pick 1
`;

function describe(c: CandidateOutcome): string {
  const result = c.result.map((r) => resultLine(r, 60)).join('; ');
  const files = c.files_changed.map(
    (f) =>
      `${f.change === 'added' ? '+' : f.change === 'deleted' ? '-' : '~'}${f.path}${f.captured === false ? ' (not captured: over the snapshot cap)' : ''}`,
  );
  return [
    `[${c.index}] ${c.branch} (${c.origin}${c.seed !== null ? ` seed ${c.seed}` : ''}) ${c.status}`,
    `    action: ${oneLine(actionText(c.action, 120), 120)}`,
    `    result: ${result || '–'}`,
    `    files:  ${files.join(' ') || 'none'}   reward ${c.reward ?? '–'}   ${c.flags.length ? c.flags.map((f) => `⚑ ${f.rule}`).join(' ') : 'no flags'}`,
  ].join('\n');
}

async function continueToEnd(c: EpisodeRunner, out: NodeJS.WritableStream): Promise<void> {
  c.onEvent((e) => {
    const line = describeEvent(e);
    if (line) out.write(line + '\n');
  });
  while (!c.ended()) await c.run();
}

/** `stepbox candidates` — N candidate next actions tried side by side in throwaway forks. */
export const command: CliCommand = {
  name: 'candidates',
  summary: 'try candidate next actions at step K in parallel forks, side by side; pick one to continue',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          at: { type: 'string' },
          n: { type: 'string' },
          from: { type: 'string' },
          'run-on': { type: 'string' },
          pick: { type: 'string' },
          json: { type: 'boolean', default: false },
          'base-url': { type: 'string' },
          temperature: { type: 'string' },
          seed: { type: 'string' },
          ...CONSENT_FLAG_OPTIONS,
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    if (positionals.length !== 1) throw new UsageError('give exactly one EPISODE (an episode or branch id)');
    const at = intFlag('at', values.at);
    if (at === undefined) throw new UsageError('--at K is required: the step the candidates follow');
    const n = intFlag('n', values.n) ?? (values.from ? 0 : 1);
    const runOn = intFlag('run-on', values['run-on']) ?? 0;
    const pick = intFlag('pick', values.pick);
    if (n < 0 || runOn < 0) throw new UsageError('--n and --run-on are counts (0 or more)');
    const engine = cliEngine(io);
    const store = engine.store;
    const out = values.json ? io.stderr : io.stdout;
    const agentOptions = agentFlags(values);
    // --seed is the first candidate's seed, never the continuation's (that keeps the recorded one).
    const { seed: _firstSeed, ...continuation } = agentOptions;
    const { info, kind } = (() => {
      try {
        const info = store.resolve(positionals[0]);
        return { info, kind: String(store.readTrace(info).header.agent.kind) };
      } catch (e) {
        throw cliError(e);
      }
    })();
    const { sources, notes } = (() => {
      try {
        return candidateSources({
          agentKind: kind,
          n,
          seed: agentOptions.seed,
          file: values.from ? resolve(values.from) : undefined,
        });
      } catch (e) {
        throw cliError(e);
      }
    })();
    for (const note of notes) io.stderr.write(`note: ${note}\n`);
    if (sources.length === 0) throw new UsageError('no candidates: give --n N or --from FILE');
    if (pick !== undefined && (pick < 0 || pick >= sources.length))
      throw new UsageError(`--pick ${pick}: there are candidates 0..${sources.length - 1}`);
    try {
      const env = await cliEpisodeEnv(engine);
      out.write(`trying ${countOf(sources.length, 'candidate')} after step ${at} of ${info.branch}…\n`);
      const set = await tryCandidates({
        ...env,
        id: info.branch,
        at,
        sources,
        runOn,
        agentOptions: continuation,
        consent: consentFromFlags(values),
      }).catch((e: unknown) => {
        throw cliError(e);
      });
      for (const c of set.candidates) out.write(describe(c) + '\n');
      if (pick === undefined) {
        await set.discard();
        if (values.json) io.stdout.write(JSON.stringify({ candidates: set.candidates }, null, 2) + '\n');
        return EXIT.ok;
      }
      const chosen = await set.pick(pick);
      out.write(`continuing candidate ${pick} on branch ${chosen.branch}\n`);
      try {
        await continueToEnd(chosen, out);
      } finally {
        await chosen.dispose();
      }
      const picked: Record<string, unknown> = { index: pick, ...episodeSummary(store, chosen) };
      if (values.json)
        io.stdout.write(JSON.stringify({ candidates: set.candidates, picked }, null, 2) + '\n');
      else
        out.write(`${String(picked.status)}: ${String(picked.end_reason)}; trace ${String(picked.trace)}\n`);
      return episodeExit(chosen);
    } finally {
      await engine.close();
    }
  },
};
