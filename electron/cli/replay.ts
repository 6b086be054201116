import { parseArgs } from 'node:util';
import { readLineage } from '../engine/trace/lineage.js';
import { replayExecAgent, type AgentReplayReport } from '../engine/external/agent-replay.js';
import { replayVerify } from '../engine/harness/replay-verify.js';
import { replayInsideAgent } from '../engine/external/inside-replay.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError, closeOnSignals, describeEvent } from './episode-cli.js';
import { resolveArg } from './store-common.js';
import { parseOrUsage } from './parse-or-usage.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';

const HELP = `stepbox replay EPISODE [--verify [--agent exec:CMD]] [--json] [--allow-network] [--allow-image]
                       [--allow-limits] [--trust-recorded-task]

Without --verify: prints the recorded timeline of EPISODE (view replay; no sandbox).

With --verify: re-executes it. Snapshot 0 is restored in a fresh sandbox and the
recorded actions run again in order (human commands re-applied at their steps); each
tool result is compared with the recording in ok, exit_code, stdout, stderr and
error.code (durations, times and ids ignored). The workspace tree hash after every step
is compared apart, and the verifier is run again.

With --verify, an episode of an exec: agent: the agent program is also re-run (the
recorded command, or the one --agent gives; an episode imported from a bundle needs
--agent, since a command from a bundle never runs by itself) against the recording — every model and tool call answered from it, nothing executed —
and must ask exactly what it asked: agent_diverged_at is the first step where its
request or tool call differs, agent_diff names the field.

--json (with --verify): diverged_at (first differing step or null), diff (its fields),
workspace_diverged_at, verifier_match, steps: [{step, verdict, diff?, workspace_match}];
for an exec: episode also agent_diverged_at and agent_diff {diverged_at, field, recorded, actual}.
--json (without): {episode, branch, events}.

With --verify, an episode of an agent inside the sandbox (sandbox:CMD, codex, claude-code):
the agent is started again on snapshot 0 and answered from the recording while it re-runs
its own tools; a step whose tool outputs (volatile fields of its recipe ignored) or
workspace differ is drift, a request the recording cannot answer is divergence.
--json: {steps, verdicts: [{step, verdict: match|drift, drift?, workspace_match}], drifted,
diverged_at, diff}.

Options of --verify (a recorded task wider than the defaults is refused without them):
${CONSENT_HELP}

Exit: 0 no divergence (and without --verify), 1 a divergence, 2 usage, 3 no Docker.

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
    if (values.agent && !values.verify) throw new UsageError('--agent re-runs an exec: agent with --verify');
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
      if (readLineage(store, info).trace.header.agent.kind === 'sandbox') {
        const inside = await replayInsideAgent({
          id: info.branch,
          ...env,
          consent: consentFromFlags(values),
          ...(values.agent ? { agentSpec: values.agent } : {}),
        }).catch((e: unknown) => {
          throw cliError(e);
        });
        for (const v of inside.verdicts)
          out.write(
            `step ${v.step}  ${v.verdict}${v.workspace_match ? '' : '  (workspace differs)'}${
              v.drift?.length
                ? `  ${v.drift.map((d) => `${d.name} (${d.call_id}): ${JSON.stringify(d.recorded.slice(0, 80))} → ${JSON.stringify(d.actual.slice(0, 80))}`).join('; ')}`
                : ''
            }\n`,
          );
        if (values.json) io.stdout.write(JSON.stringify(inside) + '\n');
        else
          out.write(
            `drifted: ${inside.drifted.length ? inside.drifted.join(', ') : 'none'}; diverged_at: ${inside.diverged_at ?? 'none'}${inside.diff ? ` (${String(inside.diff.field)})` : ''}\n`,
          );
        return inside.diverged_at === null && inside.drifted.length === 0 ? EXIT.ok : EXIT.failed;
      }
      const report = await replayVerify({
        id: info.branch,
        ...env,
        consent: consentFromFlags(values),
        onStep: (v) =>
          out.write(
            `step ${v.step}  ${v.verdict}${v.workspace_match ? '' : `  (workspace differs${v.files?.length ? `: ${v.files.map((f) => f.path).join(', ')}` : ''})`}${
              v.diff
                ? `  ${v.diff.map((d) => `${d.name}.${d.field}: ${JSON.stringify(d.recorded)} → ${JSON.stringify(d.replayed)}`).join('; ')}`
                : ''
            }\n`,
          ),
      }).catch((e: unknown) => {
        throw cliError(e);
      });
      let agent: AgentReplayReport | null = null;
      // An exec: episode's agent program is re-run too: with the command given, or the recorded one.
      if (values.agent || readLineage(store, info).trace.header.agent.kind === 'exec') {
        agent = await replayExecAgent({
          store,
          parts: engine.parts,
          id: info.branch,
          consent: consentFromFlags(values),
          ...(values.agent ? { agentSpec: values.agent } : {}),
        }).catch((e: unknown) => {
          throw cliError(e);
        });
      }
      const agentFields = agent
        ? { agent_diverged_at: agent.agent_diverged_at, agent_diff: agent.agent_diff }
        : {};
      if (values.json) io.stdout.write(JSON.stringify({ ...report, ...agentFields }) + '\n');
      else
        out.write(
          `diverged_at: ${report.diverged_at ?? 'none'}; workspace_diverged_at: ${report.workspace_diverged_at ?? 'none'}; verifier_match: ${report.verifier_match}${
            agent
              ? `; agent_diverged_at: ${agent.agent_diverged_at ?? 'none'}${agent.agent_diff ? ` (${agent.agent_diff.field})` : ''}`
              : ''
          }\n`,
        );
      const clean =
        (agent?.agent_diverged_at ?? null) === null &&
        report.diverged_at === null &&
        report.workspace_diverged_at === null &&
        report.verifier_match !== false;
      return clean ? EXIT.ok : EXIT.failed;
    } finally {
      uninstall();
      await engine.close();
    }
  },
};
