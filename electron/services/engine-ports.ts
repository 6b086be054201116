import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { normalizeAgentSpec } from '../engine/agents/agent-spec.js';
import { readBatchFile } from '../engine/batch/batch-file.js';
import { createBatch, runBatch } from '../engine/batch/batch-runner.js';
import { poolSupply } from '../engine/sandbox/sandbox-supply.js';
import { runDoctor } from '../engine/doctor.js';
import { logger } from '../engine/log.js';
import { projectRoot } from '../engine/docker/image.js';
import { differenceLabel, forkEpisode, openBranchController, replayVerify } from '../engine/harness/index.js';
import { loadWorld, type WorldFlags } from '../engine/harness/load-world.js';
import { openEngine, poolSizeFromEnv, type Engine } from '../engine/open-engine.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import { harborDatasetTasks } from '../engine/harness/harbor-task.js';
import { runWhatIf } from '../engine/harness/what-if.js';
import { tryCandidates } from '../engine/candidates/try-candidates.js';
import { stageSandboxes } from '../engine/candidates/staged-sandboxes.js';
import { join } from 'node:path';
import { engineAgentOptions } from './engine-agent-options.js';
import { engineAgentsPort } from './agents-port.js';
import { fileCatalog } from './catalog.js';
import type { BatchPort, DockerPort, DoctorPort, EnginePorts, HarnessPort, TeachingPort } from './ports.js';
import { caseFromEpisode } from '../engine/cases/case-from-episode.js';
import { startCaseEpisode } from '../engine/cases/case-runner.js';
import { CaseError } from '../engine/cases/case-library.js';
import { parseRedactions } from '../engine/export/redact.js';
import { shareData } from '../engine/share/share-data.js';
import { shareHtml } from '../engine/share/share-html.js';
import { ServiceError } from './service-error.js';
import { storeTracePort } from './trace-port.js';

const log = logger('services');

/** Where the real engine lives: the store home and the bundled resources. */
export interface EngineOptions {
  /** The store home; default `$STEPBOX_HOME` or `~/.stepbox`. */
  readonly home?: string;
  /** The folder holding `tasks/` and `cases/`; default the project's `resources/`. */
  readonly resourcesDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Reads the world a start would (loadWorld) and throws its refusal (HarnessPort.check). */
export function checkWorld(taskPath: string, flags?: WorldFlags): void {
  const world = loadWorld(taskPath, flags);
  if (!world.ok) throw new ServiceError(world.error.code, world.error.message);
}

/** The harness binding: episodes, fork, reopen, replay and what-if, all on Docker sandboxes. */
function harnessPort(engine: Engine): HarnessPort {
  const store = engine.store;
  return {
    async start({ taskPath, world: flags, agent, breakpoints, agentOptions, leadIn = 0, onImageProgress }) {
      const world = loadWorld(taskPath, flags);
      if (!world.ok) throw new ServiceError(world.error.code, world.error.message);
      return startCaseEpisode({
        ...(await engine.episodeEnv()),
        task: world.value.task,
        taskPath: world.value.taskPath,
        worldWarnings: world.value.warnings,
        agentSpec: agent,
        breakpoints,
        agentOptions: engineAgentOptions(agentOptions),
        leadIn,
        ...(onImageProgress ? { onImageProgress } : {}),
      });
    },
    check: checkWorld,
    prewarm(taskPaths) {
      for (const path of taskPaths) {
        // A project folder without its goal reads no further (nothing to warm for it yet).
        const world = loadWorld(path);
        if (!world.ok) continue;
        engine
          .prewarm(sandboxConfig(world.value.task.sandbox, world.value.task.verifier))
          .catch((e: unknown) =>
            log.debug(`no warm sandbox for ${path}: ${e instanceof Error ? e.message : String(e)}`),
          );
      }
    },
    async reopen(id, step, agent, options) {
      return openBranchController({
        id,
        at: step,
        // The window switches to the reopened branch at once (issue 33, item 3): a branch made
        // only by the first step left it showing the recorded steps, "idle", after "now on …".
        branchNow: true,
        ...(await engine.episodeEnv()),
        ...(agent ? { agentSpec: agent } : {}),
        agentOptions: engineAgentOptions(options?.agentOptions),
        consent: options?.consent,
      });
    },
    async fork(id, step, agent, options) {
      return forkEpisode({
        id,
        at: step,
        ...(await engine.episodeEnv()),
        ...(agent ? { agentSpec: agent } : {}),
        agentOptions: engineAgentOptions(options?.agentOptions),
        consent: options?.consent,
      });
    },
    async replayVerify(id, consent) {
      const report = await replayVerify({ id, ...(await engine.episodeEnv()), consent });
      const first = report.diff?.[0] ?? null;
      return {
        // The window words steps and files; a verifier that disagrees is not among what it shows.
        identical: report.diverged_at === null && report.workspace_diverged_at === null,
        steps_replayed: report.steps.length,
        first_divergence:
          report.diverged_at === null
            ? null
            : {
                step: report.diverged_at,
                call_id: first?.kind === 'tool_result_differs' ? first.call_id : null,
                field: first ? differenceLabel(first) : 'number of calls',
                recorded: first?.recorded ?? null,
                actual: first?.replayed ?? null,
              },
        workspace_diverged_at: report.workspace_diverged_at,
        steps: report.steps.map((v) => ({
          step: v.step,
          verdict: v.verdict,
          fields: [...new Set((v.diff ?? []).map(differenceLabel))],
          // A step the re-run never reached (it stopped at a request) has no workspace to differ.
          workspace_match: v.workspace_match !== false,
          files: [...(v.files ?? [])],
        })),
      };
    },
    async candidates({ id, step, sources, runOn, staged, consent }) {
      const env = await engine.episodeEnv();
      return tryCandidates({
        ...env,
        id,
        at: step,
        sources,
        runOn,
        consent,
        ...(staged ? { supply: staged } : {}),
      });
    },
    async stageCandidates(id, step, count, consent) {
      return stageSandboxes({
        store: engine.store,
        id,
        at: step,
        count,
        supply: await engine.supply(),
        consent,
      });
    },
    async whatIf(id, step, call, consent) {
      return runWhatIf({
        store,
        parts: engine.parts,
        supply: await engine.supply(),
        id,
        step,
        call,
        consent,
      });
    },
  };
}

function dockerPort(engine: Engine): DockerPort {
  return {
    async status() {
      const r = await engine.reachability();
      return { ok: r.ok, headline: r.headline, message: r.detail, fix: r.fix || null };
    },
    openTerminal: (containerId, options) => engine.terminal(containerId, options),
    openStats: (containerId, taskMemoryBytes) => engine.stats(containerId, taskMemoryBytes),
    warm: () => engine.warm(),
  };
}

function doctorPort(engine: Engine): DoctorPort {
  return {
    async run() {
      const report = await runDoctor(engine);
      return {
        ok: report.ok,
        checks: report.checks.map((c) => ({ name: c.id, ok: c.ok, message: c.detail, fix: c.fix || null })),
      };
    },
  };
}

/** Batches under `home/batches/`, on the warm pool. */
function batchPort(engine: Engine): BatchPort {
  const store = engine.store;
  const root = join(store.home, 'batches');
  return {
    create({ tasks, agent, episodes, concurrency }) {
      // A folder of Harbor task folders is a dataset: each of its tasks is one task of the batch.
      const paths = tasks.flatMap((path) => {
        const dataset = harborDatasetTasks(path);
        return dataset.length ? dataset : [path];
      });
      const loaded = paths.map((path) => {
        const t = loadWorld(path);
        if (!t.ok) throw new ServiceError(t.error.code, t.error.message);
        return { path: t.value.taskPath ?? path, task: t.value.task };
      });
      return createBatch({
        home: store.home,
        tasks: loaded,
        agent: normalizeAgentSpec(agent),
        episodes,
        concurrency,
      });
    },
    async run(dir, batch, onProgress, signal) {
      return runBatch({
        dir,
        batch,
        store,
        parts: engine.parts,
        supply: poolSupply(await engine.supply()),
        onProgress,
        signal,
        images: (await engine.episodeEnv()).images,
      });
    },
    list() {
      if (!existsSync(root)) return [];
      return readdirSync(root).flatMap((name) => {
        const dir = join(root, name);
        try {
          return [{ dir, batch: readBatchFile(dir) }];
        } catch (e) {
          log.debug(`${dir}: not a batch (${e instanceof Error ? e.message : String(e)})`);
          return [];
        }
      });
    },
  };
}

/** Save as case and Share… over the engine's store: the same code as `stepbox case new` and `stepbox share`. */
function teachingPort(engine: Engine): TeachingPort {
  return {
    async saveCase(id, name, force) {
      try {
        const made = caseFromEpisode(engine.store, engine.store.resolve(id).branch, name, {
          force,
          library: join(engine.store.home, 'cases'),
        });
        return { name: made.name, dir: made.dir, rules: made.rules, steps: made.steps };
      } catch (e) {
        // The window words its own way out (Replace: this operation's force); it names the
        // case's folder relative to the store, as a person in a browser has no host path.
        if (e instanceof CaseError && e.code === 'conflict')
          throw new ServiceError(
            'conflict',
            `case "${name}" already exists in the case library (cases/${name})`,
          );
        if (e instanceof CaseError) throw new ServiceError('invalid_input', e.message);
        throw e;
      }
    },
    async share(id, redact) {
      let redaction;
      try {
        redaction = parseRedactions(redact);
      } catch (e) {
        throw new ServiceError('invalid_input', (e as Error).message);
      }
      const branch = engine.store.resolve(id).branch;
      const html = shareHtml(await shareData(engine.store, branch, redaction));
      // Written where the window can say it was (the store's shares/), besides the browser's
      // download, whose folder the window cannot know.
      const file_name = `${branch}.html`;
      const path = join(engine.store.home, 'shares', file_name);
      await mkdir(join(engine.store.home, 'shares'), { recursive: true });
      await writeFile(path, html);
      return { html, bytes: Buffer.byteLength(html), file_name, path };
    },
  };
}

/** Binds the service ports to the real engine (Docker, the disk store, the harness). */
export function engineServicesPorts(options: EngineOptions): EnginePorts {
  const env = options.env ?? process.env;
  // One engine for the app: live episodes take their sandboxes from its warm pool (a start
  // is a hand-over, not a container start) and give them back when they are disposed.
  const engine = openEngine({ home: options.home, env, pool: poolSizeFromEnv(env) });
  const bundledDir = options.resourcesDir ?? join(projectRoot(), 'resources');
  return {
    harness: harnessPort(engine),
    traces: storeTracePort(engine),
    docker: dockerPort(engine),
    catalog: fileCatalog(bundledDir, join(engine.store.home, 'cases')),
    teaching: teachingPort(engine),
    doctor: doctorPort(engine),
    batches: batchPort(engine),
    agents: engineAgentsPort(engine.store.home),
    storeHome: engine.store.home,
    bundledDir,
    close: () => engine.close(),
  };
}
