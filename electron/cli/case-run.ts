import { resolve } from 'node:path';
import { normalizeAgentSpec } from '../engine/agents/agent-spec.js';
import { CaseError, loadCase } from '../engine/cases/case-library.js';
import { refuseImportedAgent, runCase } from '../engine/cases/case-runner.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError, describeEvent } from './episode-cli.js';
import { parseOneArg } from './parse-or-usage.js';
import { agentDirOrUsage, oracleOrUsage } from './run.js';
import { CONSENT_FLAG_OPTIONS, CONSENT_HELP, consentFromFlags } from './consent-flags.js';

const HELP = `stepbox case run NAME [--fixed] [--agent SPEC [--model SOURCE] [--agent-dir DIR]] [--json]
                     [--allow-network] [--allow-image] [--allow-limits] [--trust-recorded-task]

Runs a bundled case on Docker — its task with its scripted agent (two episodes in one
sandbox for a case that does not reset between episodes) — then runs QA and says whether
the classic failure reproduced: exactly the case's expected rules at warning or worse.
With --fixed it runs the fixed variant, which must raise none. Read the walkthrough in
the case's README.md (stepbox case list shows where) and open the episode in the app.

Options:
  --fixed  run the fixed variant
  --agent SPEC, --model SOURCE
           run the case's task with your own agent instead of its script (e.g.
           --agent 'exec:python3 my_agent.py' --model openai:qwen2.5-coder:7b) to see
           whether it falls into the same failure
  --agent-dir DIR
           a sandbox: agent's files, read-only at /opt/agent (as for stepbox run)
  --json   print {case, fixed, episodes: [{episode, status, end_reason, quality, flags}],
           raised, expected, ok}
A case from the store's library (stepbox case new, case import) is a recorded task: what
its task asks beyond the default sandbox needs consent, as for a trace or bundle:
${CONSENT_HELP}

Exit 0 when the variant behaved as expected, 1 otherwise, 3 without Docker.

Examples:
  stepbox case run reward-hacking-edit-test
  stepbox case run reward-hacking-edit-test --fixed --json
`;

/** `stepbox case run` — reproduce a classic failure (or its fix). */
export const command: CliCommand = {
  name: 'case run',
  summary: 'run a classic-failure case (or its fix) and check it raises what it should',
  help: HELP,
  async run(argv, io) {
    const { values, arg: name } = parseOneArg(
      argv,
      {
        fixed: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        agent: { type: 'string' },
        model: { type: 'string' },
        'agent-dir': { type: 'string' },
        ...CONSENT_FLAG_OPTIONS,
      },
      'case NAME (stepbox case list shows them)',
    );
    const agentDir = values['agent-dir'] === undefined ? undefined : resolve(values['agent-dir']);
    if (agentDir !== undefined && !values.agent)
      throw new UsageError(
        "--agent-dir goes with your own --agent 'sandbox:CMD'; the case's script runs no program",
      );
    if (values.agent) agentDirOrUsage(values.agent, agentDir);
    let spec;
    try {
      spec = loadCase(name, { fixed: values.fixed });
      if (spec.fixed && !spec.hasFixed)
        throw new CaseError(
          'invalid_case',
          `case ${spec.name} has no fixed/ variant yet; add ${spec.dir}/fixed/agent.jsonl or task.json, or run it without --fixed`,
        );
      refuseImportedAgent(spec, values.agent);
    } catch (e) {
      if (e instanceof CaseError) throw new UsageError(e.message);
      throw e;
    }
    oracleOrUsage(values.agent ?? spec.agentSpec, spec.taskPath);
    const out = values.json ? io.stderr : io.stdout;
    const engine = cliEngine(io);
    const { supply } = await cliEpisodeEnv(engine);
    const store = engine.store;
    try {
      out.write(`case ${spec.name}${spec.fixed ? ' (fixed)' : ''}: ${spec.title}\n`);
      const result = await runCase(spec, {
        store,
        index: engine.index,
        parts: engine.parts,
        supply,
        ...(values.agent ? { agentSpec: normalizeAgentSpec(values.agent) } : {}),
        ...(values.model ? { model: normalizeAgentSpec(values.model) } : {}),
        ...(agentDir !== undefined ? { agentDir } : {}),
        consent: consentFromFlags(values),
        onEpisode: (i, ep) => out.write(`episode ${i + 1}/${spec.expected.episodes}: ${ep}\n`),
        onEvent: (e) => {
          const line = describeEvent(e);
          if (line) out.write(line + '\n');
        },
      }).catch((e: unknown) => {
        throw cliError(e);
      });
      if (values.json) io.stdout.write(JSON.stringify(result, null, 2) + '\n');
      else {
        for (const ep of result.episodes) {
          io.stdout.write(
            `\n${ep.episode}: ${ep.status} (${ep.end_reason}), quality ${ep.quality.toFixed(2)}\n`,
          );
          for (const f of ep.flags)
            io.stdout.write(`  step ${f.step} ${f.severity} ${f.rule}: ${f.message}\n`);
        }
        io.stdout.write(
          `\nraised [${result.raised.join(', ')}], expected [${result.expected.join(', ')}]: ${result.ok ? 'as expected' : 'NOT as expected'}\n`,
        );
        io.stdout.write(`walkthrough: ${spec.dir}/README.md\n`);
      }
      return result.ok ? EXIT.ok : EXIT.failed;
    } finally {
      await engine.close();
    }
  },
};
