import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Task } from '../../shared/task.js';
import { readBatchFile, type BatchFile } from '../engine/batch/batch-file.js';
import { createBatch, runBatch, summarizeBatch, type BatchProgress } from '../engine/batch/batch-runner.js';
import { progressLine } from '../engine/batch/progress.js';
import { poolSupply } from '../engine/sandbox/sandbox-supply.js';
import { normalizeAgentSpec } from '../engine/agents/agent-spec.js';
import { agentDirOrUsage, oracleOrUsage } from './run.js';
import { loadWorldOrUsage, WORLD_FLAGS, WORLD_FLAGS_HELP, worldFlags } from './world-flags.js';
import { harborDatasetTasks } from '../engine/harness/harbor-task.js';
import type { EpisodeEnv } from '../engine/harness/episode-factory.js';
import { stepboxHome } from '../engine/trace/episode-store.js';
import type { CliCommand, CliIo } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliEpisodeEnv, cliError } from './episode-cli.js';
import { onInterrupt } from '../engine/interrupt.js';
import { rawStream } from './terminal-io.js';
import { terminalSafe } from '../../shared/terminal-text.js';
import { parseOrUsage } from './parse-or-usage.js';
import { intFlag } from './number-flags.js';

const HELP = `stepbox batch TASK... --agent SPEC [--agent-dir DIR] --episodes N --concurrency C [--out DIR] [--json]
stepbox batch --resume DIR [--concurrency C] [--json]

Runs N episodes of each TASK (a task.json or its folder, a Harbor task folder, or a
folder of Harbor task folders: a dataset, each of its tasks a TASK), C at a time, on the warm pool (sandboxes pre-started and
reset between episodes, unless a task sets sandbox.reset_between_episodes: false).
DIR (default $STEPBOX_HOME/batches/ID) gets batch.json, mapping each slot (task, index)
to its episode; it is rewritten atomically as slots start and end, so a killed batch can
resume: --resume re-runs the unfinished slots, keeping each cut-off episode under the
slot's "superseded" list — nothing lost, nothing duplicated (a slot's episode id is
recorded before the episode exists). Ctrl+C stops the batch: episodes still starting are
never created, running ones close as interrupted and their sandboxes are destroyed; the
summary is printed and the exit code is 130. A progress bar with an ETA
goes to stderr; a summary table per task to stdout. Then: stepbox report DIR, stepbox
export DIR, stepbox check DIR.

Options:
  --agent SPEC       scripted:FILE, replay:EPISODE, openai:MODEL, exec:CMD (as for stepbox run)
  --model SOURCE     what answers an exec: agent's model calls (as for stepbox run)
  --agent-dir DIR    a sandbox: agent's files, read-only at /opt/agent (as for stepbox run)
  --episodes N       episodes per task (default 1)
  --concurrency C    episodes at once (default 2)
  --out DIR          the batch folder
  --resume DIR       continue a batch
  --json             print {batch, dir, slots, summary: [...]} on stdout
${WORLD_FLAGS_HELP}

Exit 0 when every episode succeeded, 1 otherwise, 3 without Docker, 130 when stopped by Ctrl+C.

Examples:
  stepbox batch resources/tasks/hello-python --agent scripted:resources/tasks/hello-python/agent.jsonl --episodes 10 --concurrency 3
  stepbox batch path/to/harbor-dataset --agent oracle --episodes 1
  stepbox batch --resume ~/.stepbox/batches/batch-20260101-120000-ab12
  stepbox batch ~/src/my-project --goal "Make the tests pass" --verify "npm test" --agent codex --episodes 5
`;

function printSummary(io: CliIo, batch: BatchFile, dir: string): void {
  const rows = summarizeBatch(batch);
  const w = Math.max(4, ...rows.map((r) => r.task.length));
  io.stdout.write(`batch ${batch.id} in ${dir}\n`);
  io.stdout.write(
    `${'task'.padEnd(w)}  episodes  succeeded  failed  other  unfinished  mean steps  mean time\n`,
  );
  for (const r of rows)
    io.stdout.write(
      `${r.task.padEnd(w)}  ${String(r.episodes).padStart(8)}  ${String(r.succeeded).padStart(9)}  ${String(r.failed).padStart(6)}  ${String(r.other).padStart(5)}  ${String(r.unfinished).padStart(10)}  ${(r.mean_steps?.toFixed(1) ?? '-').padStart(10)}  ${r.mean_duration_ms === null ? '-' : `${(r.mean_duration_ms / 1000).toFixed(1)}s`}\n`,
    );
}

/** `stepbox batch` — many episodes on the warm pool, resumable. */
export const command: CliCommand = {
  name: 'batch',
  summary: 'run N episodes per task on the warm pool, resumable, with a progress bar',
  help: HELP,
  async run(argv, io) {
    const parsed = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          agent: { type: 'string' },
          model: { type: 'string' },
          'agent-dir': { type: 'string' },
          episodes: { type: 'string' },
          concurrency: { type: 'string' },
          out: { type: 'string' },
          resume: { type: 'string' },
          json: { type: 'boolean', default: false },
          ...WORLD_FLAGS,
        },
      }),
    );
    const { values, positionals } = parsed;
    let dir: string;
    let batch: BatchFile;
    if (values.resume) {
      if (
        positionals.length ||
        values.agent ||
        values.model ||
        values['agent-dir'] ||
        values.episodes ||
        values.out ||
        values.goal !== undefined ||
        values.verify !== undefined ||
        values['import-limit'] !== undefined
      )
        throw new UsageError(
          '--resume DIR takes no TASK, --agent, --model, --agent-dir, --episodes, --out, --goal, --verify or --import-limit: they are in its batch.json',
        );
      dir = resolve(values.resume);
      try {
        batch = readBatchFile(dir);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      for (const t of batch.tasks) oracleOrUsage(batch.agent, t.path);
      if (values.concurrency)
        batch.concurrency = intFlag('concurrency', values.concurrency, { min: 1 }) ?? batch.concurrency;
    } else {
      if (positionals.length === 0)
        throw new UsageError('give at least one TASK (a task.json or its folder)');
      if (!values.agent) throw new UsageError('--agent SPEC is required, e.g. --agent scripted:agent.jsonl');
      const flags = worldFlags(values);
      // A task file's path, or a project folder's with the flags that made its task (kept for --resume).
      // A folder of Harbor task folders is a dataset: each of its tasks is one TASK.
      const paths = positionals.flatMap((p) => {
        const dataset = harborDatasetTasks(p);
        return dataset.length ? dataset : [p];
      });
      const tasks: { path: string; task: Task; flags?: typeof flags }[] = paths.map((p) => {
        const world = loadWorldOrUsage(p, flags, io);
        // A Harbor task keeps its consent to the network (--allow-network) for --resume.
        if (world.kind === 'harbor')
          return { path: world.taskPath ?? p, task: world.task, flags: { allowNetwork: flags.allowNetwork } };
        return world.taskPath
          ? { path: world.taskPath, task: world.task }
          : { path: resolve(p), task: world.task, flags };
      });
      // A scripted file is resolved now (absolute), so --resume works from any directory.
      const spec = normalizeAgentSpec(values.agent);
      const agentDir = values['agent-dir'];
      agentDirOrUsage(spec, agentDir);
      // Before batch.json is written: each slot would end as an error at step 0.
      for (const t of tasks) oracleOrUsage(spec, t.path);
      ({ dir, batch } = createBatch({
        dir: values.out,
        home: stepboxHome(io.env),
        tasks,
        agent: spec,
        ...(values.model ? { model: normalizeAgentSpec(values.model) } : {}),
        ...(agentDir !== undefined ? { agentDir } : {}),
        episodes: intFlag('episodes', values.episodes, { min: 1 }) ?? 1,
        concurrency: intFlag('concurrency', values.concurrency, { min: 1 }) ?? 2,
      }));
    }
    io.stderr.write(`batch ${batch.id}: ${dir}\n`);
    // Installed before anything starts: a Ctrl+C while the engine and its pool come up
    // stops the batch the same way (no slot runs; the summary is printed; exit 130).
    const abort = new AbortController();
    const uninstall = onInterrupt(() => {
      io.stderr.write('\nstepbox batch: stopping; resume with stepbox batch --resume ' + dir + '\n');
      abort.abort();
    });
    // The engine keeps `concurrency` sandboxes warm; the batch recycles them between its episodes.
    let engine: ReturnType<typeof cliEngine> | null = null;
    let env: EpisodeEnv;
    try {
      engine = cliEngine(io, { pool: batch.concurrency });
      env = await cliEpisodeEnv(engine, io);
    } catch (e) {
      uninstall();
      await engine?.close();
      throw e;
    }
    const store = engine.store;
    const tty = (io.stderr as NodeJS.WriteStream).isTTY === true;
    let lastDone = -1;
    const onProgress = (p: BatchProgress) => {
      const line = progressLine(p);
      if (tty) rawStream(io.stderr).write(`\r${terminalSafe(line)}`);
      else if (p.done !== lastDone) io.stderr.write(line + '\n');
      lastDone = p.done;
    };
    try {
      await runBatch({
        dir,
        batch,
        store,
        parts: env.parts,
        supply: poolSupply(env.supply),
        onProgress,
        signal: abort.signal,
        ...(env.images ? { images: env.images } : {}),
        ...(env.onImageProgress ? { onImageProgress: env.onImageProgress } : {}),
      }).catch((e: unknown) => {
        throw cliError(e);
      });
    } finally {
      uninstall();
      if (tty) io.stderr.write('\n');
      await engine.close();
    }
    if (values.json)
      io.stdout.write(
        JSON.stringify(
          { batch: batch.id, dir, slots: batch.slots, summary: summarizeBatch(batch) },
          null,
          2,
        ) + '\n',
      );
    else printSummary(io, batch, dir);
    if (abort.signal.aborted) return 130;
    return batch.slots.every((s) => s.status === 'succeeded') ? EXIT.ok : EXIT.failed;
  },
};
