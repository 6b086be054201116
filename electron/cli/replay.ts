import { parseArgs } from 'node:util';
import { readLineage } from '../engine/trace/lineage.js';
import { replayVerify } from '../engine/harness/replay-verify.js';
import {
  differenceLabel,
  type ReplayReport,
  type StepDifference,
  type StepVerdict,
} from '../engine/harness/replay-report.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError, closeOnSignals, describeEvent } from './episode-cli.js';
import { resolveArg } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';

const HELP = `stepbox replay EPISODE [--verify [--agent AGENT]] [--json] [--allow-network] [--allow-image]
                       [--allow-limits] [--trust-recorded-task]

Without --verify: prints the recorded timeline of EPISODE (view replay; no sandbox).

With --verify: re-executes it from snapshot 0 in a fresh sandbox and reports, step by step,
what matched and what differed. How depends on the agent that recorded it:
- scripted:, replay:, openai:, anthropic:, gemini:, manual, oracle: the recorded actions
  run again in order (human commands re-applied at their steps); each tool result is
  compared in ok, exit_code, stdout, stderr and error.code (durations, times and ids
  ignored), the workspace tree hash after every step apart, and the verifier is run again.
- exec:CMD: that, and the agent program is run again against the recording (every model
  and tool call answered from it, nothing executed) and must ask exactly what it asked.
- sandbox:CMD and recipes (codex, claude-code, …): the agent starts again on snapshot 0 and
  re-runs its own tools answered from the recording; its tool outputs (volatile fields of
  its recipe ignored) and workspace are compared.
--agent gives the program to re-run (exec:, sandbox:, a recipe) instead of the recorded
one; an episode imported from a bundle needs it (a command from a bundle never runs by itself).

Each step is match, no_calls (a final answer) or diverged, with what differed:
tool_result_differs (a call's result: TOOL.FIELD, or TOOL.output for an agent that ran it),
calls_differ (another number of calls), request_unanswerable (the re-run agent asked what
the recording cannot answer; its re-run stops there).

--json (with --verify): {episode, branch, replayed: actions|actions_and_program|program,
verdict: identical|diverged, steps: [{step, verdict, diff?: [{kind, ...}], workspace_match,
files?}], diverged_at, diff, workspace_diverged_at, verifier_match, recorded_verifier,
replayed_verifier}. --json (without): {episode, branch, events}.

Options of --verify (a recorded task wider than the defaults is refused without them):
${CONSENT_HELP}

Exit: 0 identical (and without --verify), 1 diverged, 2 usage, 3 no Docker.

Examples:
  npx stepbox replay ep-20260101-120000-ab12
  npx stepbox replay ep-20260101-120000-ab12 --verify --json
  npx stepbox replay ep-20260101-120000-ab12 --verify --agent 'exec:python3 agent.py'
`;

/** `stepbox replay` — view a trace, or re-execute it and report divergences. */
export const command: CliCommand = {
  name: 'replay',
  summary: 'print a recorded episode, or re-execute it (--verify) and report divergences',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          verify: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
          agent: { type: 'string' },
          ...CONSENT_FLAG_OPTIONS,
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError('give exactly one EPISODE (an episode or branch id)');
    const engine = cliEngine(io);
    const store = engine.store;
    const info = resolveArg(store, positionals[0]);
    if (values.agent && !values.verify)
      throw new UsageError('--agent gives the agent program --verify re-runs; add --verify');
    if (!values.verify) {
      const lineage = readLineage(store, info);
      if (values.json) {
        io.stdout.write(
          JSON.stringify({ episode: info.episode, branch: info.branch, events: lineage.events }) + '\n',
        );
        return EXIT.ok;
      }
      for (const e of [...lineage.events, ...(lineage.trace.end ? [lineage.trace.end] : [])]) {
        const line = describeEvent(e);
        if (line) io.stdout.write(line + '\n');
      }
      return EXIT.ok;
    }
    const env = await cliEpisodeEnv(engine);
    // Ctrl+C destroys the re-execution's sandbox (closing the engine) before exiting.
    const uninstall = closeOnSignals(io, () => null, engine);
    const out = values.json ? io.stderr : io.stdout;
    try {
      const report = await replayVerify({
        id: info.branch,
        ...env,
        consent: consentFromFlags(values),
        ...(values.agent ? { agentSpec: values.agent } : {}),
        onStep: (v) => out.write(verdictLine(v) + '\n'),
      }).catch((e: unknown) => {
        throw cliError(e);
      });
      if (values.json) io.stdout.write(JSON.stringify(report) + '\n');
      else out.write(summaryLine(report) + '\n');
      return report.verdict === 'identical' ? EXIT.ok : EXIT.failed;
    } finally {
      uninstall();
      await engine.close();
    }
  },
};

/** A recorded or replayed value, cut to one short line. */
function short(v: unknown): string {
  const text = JSON.stringify(v) ?? 'nothing';
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** One difference: what, then recorded → replayed. */
function differenceText(d: StepDifference): string {
  return `${differenceLabel(d)}: ${short(d.recorded)} → ${short(d.replayed)}`;
}

/** One step of the report, the same for every agent. */
export function verdictLine(v: StepVerdict): string {
  const files = v.files?.length ? `: ${v.files.map((f) => f.path).join(', ')}` : '';
  const workspace = v.workspace_match === false ? `  (workspace differs${files})` : '';
  const diff = v.diff?.length ? `  ${v.diff.map(differenceText).join('; ')}` : '';
  return `step ${v.step}  ${v.verdict}${workspace}${diff}`;
}

/** The report's last line: the verdict and the first of each divergence. */
export function summaryLine(r: ReplayReport): string {
  const first = r.diff?.[0];
  return [
    `${r.verdict}`,
    `diverged_at: ${r.diverged_at ?? 'none'}${first ? ` (${first.kind}: ${differenceLabel(first)})` : ''}`,
    `workspace_diverged_at: ${r.workspace_diverged_at ?? 'none'}`,
    `verifier_match: ${r.verifier_match ?? 'not compared'}`,
  ].join('; ');
}
