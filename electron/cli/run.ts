import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadWorldOrUsage, WORLD_FLAGS, WORLD_FLAGS_HELP, worldFlags } from './world-flags.js';
import { branchOracleProblem, startEpisode } from '../engine/harness/episode-factory.js';
import { readLineage } from '../engine/trace/lineage.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import type { AgentOutputChunk } from '../engine/harness/episode-controller.js';
import { parseBreakFlags, BREAK_FORMS } from './breakpoint-flags.js';
import type { CliCommand, CliIo } from './command.js';
import { UsageError } from './command.js';
import {
  cliEngine,
  cliEpisodeEnv,
  cliError,
  closeOnSignals,
  exitKeepingSandbox,
  describeEvent,
  episodeExit,
  episodeSummary,
  contextPolicyFlag,
} from './episode-cli.js';
import { intFlag, numberFlag } from './number-flags.js';
import { manualAgentOf } from '../engine/agents/manual-agent.js';
import { checkAgentDir } from '../engine/agents/agent-spec.js';
import { ORACLE_FLAG, oracleProblem } from '../engine/agents/oracle-agent.js';
import { LineReader, promptManualAgent, stepRepl, STEP_FLAG_HELP } from './step-repl.js';
import type { EpisodeEnv } from '../engine/harness/episode-factory.js';
import type { Engine } from '../engine/open-engine.js';
import type { DiskEpisodeStore } from '../engine/trace/episode-store.js';
import { parseOrUsage } from './parse-or-usage.js';
import type { StopPoints } from '../../shared/held-action.js';
import { didYouMean } from '../../shared/did-you-mean.js';
import { RUNTIME_FLAG, RUNTIME_HELP, runtimeFlag, withRuntime } from './runtime-flag.js';

const HELP = `stepbox run TASK --agent SPEC [--step] [--keep] [--json] [--break KIND[=V]]...
                  [--base-url URL] [--temperature T] [--seed N] [--runtime NAME]
stepbox run DIR --goal TEXT [--verify CMD] --agent SPEC [...]

Runs an episode of TASK (a task.json, or a folder holding one, or a Harbor task folder
with task.toml + instruction.md) in a fresh Docker sandbox and records its trace under
$STEPBOX_HOME (default ~/.stepbox).

A project folder DIR without a task.json is a task too: its files are the workspace (in
a git checkout the files git sees — tracked and untracked, .gitignore'd ones left out —
and .git itself; otherwise every file), the goal comes from --goal, the name from the
folder. Symlinks leaving DIR, devices, sockets and fifos are skipped and listed; a folder
over the import limit is refused. stepbox task init DIR writes that task as a file to edit.

Agents (--agent):
  scripted:FILE     model outputs from a JSONL file, one assistant message per line
  replay:EPISODE    the model outputs recorded in an episode
  openai:MODEL@URL  an OpenAI-compatible endpoint (@URL, --base-url or OPENAI_BASE_URL;
                    key from OPENAI_API_KEY, never recorded; for Ollama any dummy key works)
  manual            you type each assistant message (JSON) at the prompt; the end of
                    input (Ctrl+D, a closed stdin) stops the episode: its trace closes
                    as interrupted (end_reason input_ended), exit 1
  exec:CMD          your own agent program, run as sh -c CMD in the task's folder with
                    OPENAI_BASE_URL and STEPBOX_MCP_URL pointing at this episode (README:
                    "Bring your own agent"); --model says what answers its model calls
  sandbox:CMD       an agent that runs its own tools, run as sh -c CMD INSIDE the sandbox
                    (README: "Agents inside the sandbox"); --model answers its model calls,
                    --agent-dir DIR puts its files read-only at /opt/agent
  codex, claude-code
                    a recipe (stepbox agents add NAME first): Codex CLI, Claude Code inside
  oracle            a Harbor task's solution/solve.sh, run as the one step

Options:
${STEP_FLAG_HELP}
  --keep            leave the sandbox running at the end (named stepbox-kept-ID, which
                    no later sweep removes) and print its id; remove it with docker rm -f ID
  --json            print one JSON document: episode, branch, status, end_reason, steps,
                    verifier {success, exit_code} or null, trace, return (discounted),
                    final_reward (the verifier's)
  --break KIND[=V]  pause (in --step mode) on: ${BREAK_FORMS}
  --stop-before tool|answer
                    in --step mode, also stop inside each step: before its tools run
                    (run, edit the arguments, or give the result) or before the model's
                    answer reaches the agent (edit it); repeatable, or t / a at the prompt
  --base-url URL    the endpoint of an openai: agent
  --temperature T   sampling temperature (recorded in every model_request)
  --seed N          sampling seed (recorded)
  --model SOURCE    what answers an exec:, sandbox: or recipe agent's model calls:
                    openai:MODEL (with --base-url), anthropic:MODEL@URL (key from
                    ANTHROPIC_API_KEY), scripted:FILE, replay:EPISODE or manual
  --agent-dir DIR   a sandbox: agent's files, read-only at /opt/agent (/opt/agent/bin on PATH)
  --context-policy end|drop_oldest
                    on a context-window overflow: end the episode (context_overflow,
                    default) or replace the oldest tool observations with a note
${WORLD_FLAGS_HELP}
${RUNTIME_HELP}

Exit: 0 succeeded, 1 failed/timeout/error/interrupted, 2 usage, 3 no Docker or image.
Ctrl+C closes the trace as interrupted and destroys the sandbox.

Examples:
  npx stepbox run resources/tasks/hello-python --agent scripted:resources/tasks/hello-python/agent.jsonl
  npx stepbox run resources/tasks/notes-memory --agent scripted:resources/tasks/notes-memory/agent.jsonl --step
  OPENAI_API_KEY=sk-none npx stepbox run resources/tasks/hello-python --agent openai:qwen2.5-coder:7b \\
      --base-url http://127.0.0.1:11434/v1 --temperature 0 --seed 1 --json
  npx stepbox run ~/src/my-project --goal "Make the tests pass" --verify "npm test" --agent codex
  npx stepbox run resources/agents/python-stdlib --agent 'exec:python3 agent.py' \
      --model scripted:resources/agents/python-stdlib/model.jsonl
  npx stepbox run resources/agents/python-inside --agent 'sandbox:python3 /opt/agent/agent.py' \
      --agent-dir resources/agents/python-inside --model scripted:resources/agents/python-inside/model.jsonl
`;

/** The flags run, fork and resume share: stepping, keeping the sandbox, output and agent options. */
export const EPISODE_FLAGS = {
  step: { type: 'boolean', default: false },
  keep: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  'base-url': { type: 'string' },
  temperature: { type: 'string' },
  seed: { type: 'string' },
  'context-policy': { type: 'string' },
  model: { type: 'string' },
  'agent-dir': { type: 'string' },
  'stop-before': { type: 'string', multiple: true },
} as const;

/** The stop points `--stop-before tool|answer` turns on; anything else is a usage error. */
export function stopBeforeFlags(values: readonly string[]): Partial<StopPoints> {
  const points: Partial<StopPoints> = {};
  for (const v of values) {
    if (v === 'tool' || v === 'tools') points.before_tool = true;
    else if (v === 'answer' || v === 'answers') points.before_answer = true;
    else {
      const near = didYouMean(v, ['tool', 'answer']);
      throw new UsageError(
        `--stop-before ${v}: expected tool or answer${near ? ` (did you mean ${near}?)` : ''}`,
      );
    }
  }
  return points;
}

/**
 * For commands that start their episodes later (batch, case run, ab): a `--agent-dir` the
 * agent cannot use is a usage error now, not a failed episode per slot.
 */
export function agentDirOrUsage(spec: string, agentDir: string | undefined): void {
  try {
    checkAgentDir(spec, agentDir);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/**
 * The oracle on a task without solution/solve.sh, refused before anything starts (exit 2), in
 * one set of words for every command that can start it: run, batch (and --resume), case run,
 * ab, fork and resume (it ended the episode as an error at step 0, or each batch slot so).
 * `decided`: the decisions the oracle had made already; one that continues past its one step
 * runs nothing more (a fork or resume at K ≥ 1 of an oracle's branch), so needs no solution.
 */
export function oracleOrUsage(spec: string | undefined, taskPath: string | null, decided = 0): void {
  if (spec?.trim() !== 'oracle' || decided > 0) return;
  const problem = oracleProblem(taskPath, ORACLE_FLAG);
  if (problem) throw new UsageError(problem);
}

/**
 * {@link oracleOrUsage} for a branch continued at step `at` (fork, resume): the agent given, or
 * the branch's own as it stood at that step (the one that continues without --agent).
 */
export function branchOracleOrUsage(
  store: DiskEpisodeStore,
  branch: string,
  at: number,
  agentSpec: string | undefined,
): void {
  const lineage = readLineage(store, store.resolve(branch));
  const problem = branchOracleProblem(lineage, at, agentSpec, ORACLE_FLAG);
  if (problem) throw new UsageError(problem);
}

/** The agent options given by {@link EPISODE_FLAGS}. */
export function agentFlags(values: {
  'base-url'?: string;
  temperature?: string;
  seed?: string;
  'context-policy'?: string;
  model?: string;
  'agent-dir'?: string;
}) {
  return {
    model: values.model,
    ...(values['agent-dir'] !== undefined ? { agentDir: values['agent-dir'] } : {}),
    baseUrl: values['base-url'],
    temperature: numberFlag('temperature', values.temperature),
    seed: intFlag('seed', values.seed),
    contextPolicy: contextPolicyFlag(values['context-policy']),
  };
}

/** `stepbox run` — one episode of a task. */
export const command: CliCommand = {
  name: 'run',
  summary: 'run an episode of a task with an agent (scripted, replay, openai, manual)',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        options: {
          agent: { type: 'string' },
          ...EPISODE_FLAGS,
          ...WORLD_FLAGS,
          ...RUNTIME_FLAG,
          break: { type: 'string', multiple: true, default: [] },
        },
        allowPositionals: true,
        strict: true,
      }),
    );
    const { values, positionals } = parsed;
    if (positionals.length !== 1)
      throw new UsageError(
        'give exactly one TASK (a task.json, its folder, or a project folder with --goal)',
      );
    if (!values.agent) throw new UsageError('--agent SPEC is required, e.g. --agent scripted:agent.jsonl');
    const world = loadWorldOrUsage(positionals[0], worldFlags(values), io);
    // The oracle on a task without a solution: refused before a sandbox starts (it ended the
    // episode as an error at step 0).
    oracleOrUsage(values.agent, world.taskPath ?? resolve(positionals[0]));
    // Recorded in the header as the task's own: a fork or replay runs on the same runtime.
    const runtime = runtimeFlag(values.runtime);
    const agentSpec = values.agent;
    const breakpoints = parseBreakFlags(values.break ?? []);
    const engine = cliEngine(io);
    return runEpisodeCommand(io, engine, values, (env) =>
      startEpisode({
        task: withRuntime(world.task, runtime),
        taskPath: world.taskPath,
        worldWarnings: world.warnings,
        agentSpec,
        ...env,
        breakpoints,
        agentOptions: agentFlags(values),
      }),
    );
  },
};

/**
 * Opens Docker, starts an episode with `start`, drives it to its end and closes Docker
 * (with --keep, exits leaving the sandbox). Shared by run, fork and resume; `extra`
 * adds fields to the summary.
 */
export async function runEpisodeCommand(
  io: CliIo,
  engine: Engine,
  flags: { step: boolean; keep: boolean; json: boolean; 'stop-before'?: string[] },
  start: (env: EpisodeEnv) => Promise<EpisodeRunner>,
  extra?: (c: EpisodeRunner) => Record<string, unknown>,
): Promise<number> {
  const stopPoints = stopBeforeFlags(flags['stop-before'] ?? []);
  if (Object.keys(stopPoints).length > 0 && !flags.step)
    throw new UsageError('--stop-before stops inside steps for a person at the prompt: add --step');
  const env = await cliEpisodeEnv(engine, io);
  let controller: EpisodeRunner | null = null;
  const uninstall = closeOnSignals(io, () => controller, engine);
  try {
    controller = await start(env).catch((e: unknown) => {
      throw cliError(e);
    });
    controller.setStopPoints(stopPoints);
    const code = await drive(controller, io, engine.store, {
      step: flags.step,
      keep: flags.keep,
      json: flags.json,
      extra: extra?.(controller),
    });
    if (flags.keep) await exitKeepingSandbox(io, code);
    return code;
  } finally {
    uninstall();
    if (!flags.keep) await engine.close();
  }
}

/**
 * A chunk of an exec: agent's output as lines marked with their stream (`agent |` stdout,
 * `agent !` stderr); a line the agent has not finished yet is ended here, so what stepbox
 * prints next starts on a line of its own.
 */
export function agentOutputLines(chunk: AgentOutputChunk): string {
  const mark = chunk.stream === 'stdout' ? 'agent | ' : 'agent ! ';
  const lines = chunk.data.endsWith('\n') ? chunk.data.slice(0, -1).split('\n') : chunk.data.split('\n');
  const text = chunk.data === '' ? '' : lines.map((l) => mark + l + '\n').join('');
  return chunk.truncated
    ? `${text}agent: step ${chunk.step}'s ${chunk.stream} reached its cap; the rest of it is neither shown nor kept\n`
    : text;
}

/** Runs (or steps) an episode to its end, prints the summary, disposes it. Shared by run, fork and resume. */
export async function drive(
  c: EpisodeRunner,
  io: CliIo,
  store: DiskEpisodeStore,
  options: { step: boolean; keep: boolean; json: boolean; extra?: Record<string, unknown> },
): Promise<number> {
  const out = options.json ? io.stderr : io.stdout;
  out.write(`episode ${c.episode} (branch ${c.branch})\n`);
  c.onBranch((b) => out.write(`continuing on new branch ${b}\n`));
  c.onEvent((e) => {
    const line = describeEvent(e);
    if (line) out.write(line + '\n');
  });
  // An exec: agent's own output, as it writes it (stderr: with --json, stdout is one document).
  c.onAgentOutput((chunk) => io.stderr.write(agentOutputLines(chunk)));
  const needsInput = options.step || manualAgentOf(c.currentAgent()) !== null;
  const reader = needsInput ? new LineReader(io) : null;
  try {
    if (reader) promptManualAgent(c, io, reader);
    if (options.step && reader) await stepRepl(c, io, reader);
    else {
      while (!c.ended()) {
        const reason = await c.run();
        if (reason.kind === 'breakpoint' || reason.breakpoint)
          out.write(`breakpoint: ${reason.message} (continuing; use --step to pause)\n`);
      }
    }
  } finally {
    reader?.close();
  }
  const summary = { ...episodeSummary(store, c), ...(options.extra ?? {}) };
  const box = c.sandbox();
  await c.dispose({ keepSandbox: options.keep });
  if (options.keep && box) {
    // Renamed stepbox-kept-…, so the next stepbox process's orphan sweep leaves it.
    if (box.keep)
      await box
        .keep()
        .catch((e: Error) =>
          io.stderr.write(
            `warning: could not mark the sandbox kept (${e.message}); a later stepbox process may remove it\n`,
          ),
        );
    const short = box.id.slice(0, 12);
    out.write(
      `sandbox kept: ${box.id} (enter it: docker exec -it ${short} bash; remove it: docker rm -f ${short})\n`,
    );
    (summary as Record<string, unknown>).sandbox = box.id;
  }
  if (options.json) io.stdout.write(JSON.stringify(summary) + '\n');
  else out.write(`${summary.status}: ${summary.end_reason}; trace ${summary.trace}\n`);
  return episodeExit(c);
}
