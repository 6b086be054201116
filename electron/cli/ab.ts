import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { normalizeAgentSpec } from '../engine/agents/agent-spec.js';
import { readAbConfig, runAb, type AbReport } from '../engine/batch/ab.js';
import { poolSupply } from '../engine/sandbox/sandbox-supply.js';
import { loadWorldOrUsage } from './world-flags.js';
import type { CliCommand, CliIo } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError } from './episode-cli.js';
import { parseOrUsage } from './parse-or-usage.js';
import { intFlag } from './number-flags.js';
import { agentDirOrUsage, oracleOrUsage } from './run.js';

const HELP = `stepbox ab --a CONFIG --b CONFIG TASK... [--episodes N] [--agent SPEC]
           [--model SOURCE] [--agent-dir DIR] [--concurrency C] [--json]

Runs the same tasks under two configurations and compares them. A CONFIG is a JSON file
{"agent"?: SPEC, "model"?: SOURCE, "agent_dir"?: DIR, "sandbox"?: {...}, "timeouts"?: {...}} whose sandbox and timeouts are
merged over each task (objects merge key by key); its agent replaces --agent. Episodes of
A and B alternate so both see the same machine load. Reports each side's success rate,
mean steps, duration, QA quality and return, each difference (B - A), and which QA
flags (warning or worse) differ in count.

Options:
  --a CONFIG, --b CONFIG  the two configurations (required)
  --episodes N            episodes per task per side (default 3)
  --agent SPEC            the agent of a side whose config names none
  --model SOURCE          what answers an exec: agent's model calls, for a side whose
                          config names no agent (a config may say "model" itself)
  --agent-dir DIR         a sandbox: agent's files, read-only at /opt/agent, for a side
                          whose config names no agent (a config may say "agent_dir")
  --concurrency C         episodes at once (default 2)
  --json                  print {a, b, difference, flags_differ: [{id, a, b}], episodes}

Example (the case's own 1 s step timeout against a relaxed 10 s one):
  echo '{}' > as-is.json; echo '{"timeouts": {"step_soft": 10, "step_hard": 10}}' > relaxed.json
  stepbox ab --a as-is.json --b relaxed.json resources/cases/timeout-too-strict \\
      --agent scripted:resources/cases/timeout-too-strict/agent.jsonl --episodes 2
`;

function printReport(io: CliIo, r: AbReport): void {
  const row = (name: string, a: number, b: number, d: number, digits = 2) =>
    io.stdout.write(
      `${name.padEnd(18)} ${a.toFixed(digits).padStart(10)} ${b.toFixed(digits).padStart(10)} ${(d >= 0 ? '+' : '') + d.toFixed(digits)}\n`,
    );
  io.stdout.write(`${'metric'.padEnd(18)} ${'A'.padStart(10)} ${'B'.padStart(10)} B - A\n`);
  row('success rate', r.a.success_rate, r.b.success_rate, r.difference.success_rate);
  row('mean steps', r.a.mean_steps, r.b.mean_steps, r.difference.mean_steps, 1);
  row('mean duration ms', r.a.mean_duration_ms, r.b.mean_duration_ms, r.difference.mean_duration_ms, 0);
  row('mean quality', r.a.mean_quality, r.b.mean_quality, r.difference.mean_quality);
  row('mean return', r.a.mean_return, r.b.mean_return, r.difference.mean_return);
  io.stdout.write(
    r.flags_differ.length
      ? `flags that differ: ${r.flags_differ.map((f) => `${f.id} (A ${f.a}, B ${f.b})`).join(', ')}\n`
      : 'no QA flag differs\n',
  );
}

/** `stepbox ab` — the same tasks under two configurations, compared. */
export const command: CliCommand = {
  name: 'ab',
  summary: 'run tasks under two configs (agent, sandbox, timeouts) and compare metrics and flags',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          a: { type: 'string' },
          b: { type: 'string' },
          episodes: { type: 'string' },
          agent: { type: 'string' },
          model: { type: 'string' },
          'agent-dir': { type: 'string' },
          concurrency: { type: 'string' },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    const { values, positionals } = parsed;
    if (!values.a || !values.b) throw new UsageError('--a CONFIG and --b CONFIG are both required');
    if (positionals.length === 0) throw new UsageError('give at least one TASK');
    const episodes = intFlag('episodes', values.episodes, { min: 1 }) ?? 3;
    const concurrency = intFlag('concurrency', values.concurrency, { min: 1 }) ?? 2;
    let a, b, tasks;
    try {
      a = readAbConfig(values.a);
      b = readAbConfig(values.b);
      // Through the one loader (workspace.from made absolute); each side's config merges over the task.
      tasks = positionals.map((p) => {
        const world = loadWorldOrUsage(p, {}, io);
        return {
          path: world.taskPath ?? resolve(p),
          doc: world.task as unknown as Record<string, unknown>,
          warnings: world.warnings,
        };
      });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    // Scripted paths and agent folders become absolute against the cwd (a config's too).
    const norm = (s?: string) => (s ? normalizeAgentSpec(s) : undefined);
    const dir = (s?: string) => (s === undefined ? undefined : resolve(s));
    for (const [side, c] of [
      ['A', a],
      ['B', b],
    ] as const) {
      const agent = c.agent ?? values.agent;
      const agentDir = c.agent_dir ?? (c.agent ? undefined : values['agent-dir']);
      try {
        if (agent && agentDir !== undefined) agentDirOrUsage(agent, agentDir);
        for (const t of tasks) oracleOrUsage(agent, t.path);
      } catch (e) {
        throw new UsageError(`side ${side}: ${(e as Error).message}`);
      }
    }
    const engine = cliEngine(io, { pool: concurrency });
    const { supply } = await cliEpisodeEnv(engine);
    const store = engine.store;
    let report: AbReport;
    try {
      report = await runAb({
        tasks,
        a: { ...a, agent: norm(a.agent), model: norm(a.model), agent_dir: dir(a.agent_dir) },
        b: { ...b, agent: norm(b.agent), model: norm(b.model), agent_dir: dir(b.agent_dir) },
        defaultAgent: norm(values.agent),
        defaultModel: norm(values.model),
        defaultAgentDir: dir(values['agent-dir']),
        episodes,
        concurrency,
        store,
        parts: engine.parts,
        supply: poolSupply(supply),
        onEpisode: (side, task, ep, status) =>
          io.stderr.write(`${side.toUpperCase()} ${task} ${ep}: ${status}\n`),
      }).catch((e: unknown) => {
        if (e instanceof Error && /names no agent|not a valid task/.test(e.message))
          throw new UsageError(e.message);
        throw cliError(e);
      });
    } finally {
      await engine.close();
    }
    if (values.json) io.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else printReport(io, report);
    return EXIT.ok;
  },
};
