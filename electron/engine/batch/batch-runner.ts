import { join, resolve } from 'node:path';
import { withoutBuild, type ImageProgress, type TaskImages } from '../harness/task-images.js';
import type { Task } from '../../../shared/task.js';
import { HarnessError } from '../harness/harness-error.js';
import { crashPoint } from '../crash-point.js';
import { loadWorld, type World, type WorldFlags } from '../harness/load-world.js';
import type { DiskEpisodeStore } from '../trace/episode-store.js';
import { newId } from '../trace/episode-ids.js';
import { BatchFile, emptySlot, writeBatchFile, type BatchSlot } from './batch-file.js';
import { runEpisodeToEnd } from './run-episode.js';
import type { EpisodeParts } from '../episode-parts.js';
import { TaskSandboxes, type SandboxSupply } from '../sandbox/sandbox-supply.js';

/** Progress of a running batch. */
export interface BatchProgress {
  readonly done: number;
  readonly total: number;
  readonly ok: number;
  readonly running: number;
  readonly elapsedMs: number;
}

/** A new batch: one slot per (task, index), written to `dir/batch.json` before anything runs. */
export function createBatch(options: {
  readonly dir?: string;
  readonly home: string;
  /** Each task's path (a task file, or a folder `loadWorld` reads with `flags`). */
  readonly tasks: readonly { path: string; task: Task; flags?: WorldFlags }[];
  readonly agent: string;
  readonly model?: string;
  /** A sandbox: agent's files (`--agent-dir`), kept absolute in batch.json. */
  readonly agentDir?: string;
  readonly episodes: number;
  readonly concurrency: number;
}): { dir: string; batch: BatchFile } {
  const id = newId('batch-');
  const dir = resolve(options.dir ?? join(options.home, 'batches', id));
  const batch: BatchFile = {
    format: 'stepbox.batch/1',
    id,
    home: options.home,
    created: Date.now(),
    agent: options.agent,
    ...(options.model !== undefined ? { model: options.model } : {}),
    ...(options.agentDir !== undefined ? { agent_dir: resolve(options.agentDir) } : {}),
    episodes: options.episodes,
    concurrency: options.concurrency,
    tasks: options.tasks.map((t) => ({
      path: resolve(t.path),
      name: t.task.name,
      ...(t.flags?.goal !== undefined ? { goal: t.flags.goal } : {}),
      ...(t.flags?.verify !== undefined ? { verify: t.flags.verify } : {}),
      ...(t.flags?.importLimit !== undefined ? { import_limit: t.flags.importLimit } : {}),
      ...(t.flags?.allowNetwork ? { allow_network: true } : {}),
    })),
    slots: options.tasks.flatMap((t) =>
      Array.from({ length: options.episodes }, (_, index) => emptySlot(resolve(t.path), t.task.name, index)),
    ),
  };
  writeBatchFile(dir, batch);
  return { dir, batch };
}

/** An episode in the store, as resume reconciliation sees it. */
export interface StoredEpisodeRef {
  readonly id: string;
  readonly task: string;
  readonly created: number;
}

/**
 * Prepares a batch to resume: a slot whose episode never finished (the process was
 * killed, or the episode was interrupted) keeps that episode under `superseded` — its
 * trace stays in the store — and is emptied to run again. A slot's episode id is recorded
 * before the episode is created, so an id the store (`stored`, when given) does not hold
 * never came to exist and is dropped, not superseded. Batch files of versions that
 * recorded the id only after creating the episode may have a slot `starting` with no
 * episode: the one the store made in that instant is found by task and start time among
 * `stored`. Returns how many slots were reset.
 */
export function supersedePartial(batch: BatchFile, stored?: readonly StoredEpisodeRef[]): number {
  const known = new Set(batch.slots.flatMap((s) => [...(s.episode ? [s.episode] : []), ...s.superseded]));
  const inStore = new Set(stored?.map((e) => e.id));
  const exists = (id: string) => stored === undefined || inStore.has(id);
  const orphans = (stored ?? [])
    .filter((e) => !known.has(e.id) && e.created >= batch.created)
    .sort((a, b) => a.created - b.created);
  let n = 0;
  for (const slot of batch.slots) {
    const cut = slot.status === 'interrupted' || (slot.status === null && slot.episode !== null);
    if (slot.status === null && slot.episode === null && slot.starting !== null) {
      const i = orphans.findIndex((e) => e.task === slot.task_name && e.created >= slot.starting!);
      if (i >= 0) slot.superseded.push(orphans.splice(i, 1)[0].id);
    }
    if (cut && slot.episode && exists(slot.episode)) slot.superseded.push(slot.episode);
    if (cut || slot.starting !== null) n++;
    // Run again: empty, but still listing the episodes it superseded.
    if (slot.status === null || cut)
      Object.assign(slot, emptySlot(slot.task, slot.task_name, slot.index), { superseded: slot.superseded });
  }
  return n;
}

/** Options of {@link runBatch}. */
export interface RunBatchOptions {
  readonly dir: string;
  readonly batch: BatchFile;
  readonly store: DiskEpisodeStore;
  readonly parts: EpisodeParts;
  /** The batch's own supply (e.g. a `poolSupply`): closed when the batch ends. */
  readonly supply: SandboxSupply;
  readonly onProgress?: (p: BatchProgress) => void;
  /** Aborting stops taking slots and stops the running episodes (they stay unfinished, for --resume). */
  readonly signal?: AbortSignal;
  /** Builds the images of tasks that name a Dockerfile (`sandbox.build`), once per task before any slot. */
  readonly images?: TaskImages;
  /** Each line of those builds. */
  readonly onImageProgress?: (p: ImageProgress) => void;
}

/**
 * Runs every unfinished slot of a batch, `batch.concurrency` at a time, writing
 * `batch.json` atomically whenever a slot gets its episode and when it ends, so a kill at
 * any moment loses nothing and `--resume` duplicates nothing.
 */
export async function runBatch(options: RunBatchOptions): Promise<BatchFile> {
  const { batch, dir } = options;
  const save = () => writeBatchFile(dir, batch);
  supersedePartial(
    batch,
    options.store.listEpisodes().flatMap((id) => {
      const meta = options.store.meta(id);
      return [{ id, task: meta.task, created: meta.created }];
    }),
  );
  save();
  const tasks = new Map<string, World>();
  for (const t of batch.tasks) {
    const loaded = loadWorld(t.path, {
      ...(t.goal !== undefined ? { goal: t.goal } : {}),
      ...(t.verify !== undefined ? { verify: t.verify } : {}),
      ...(t.import_limit !== undefined ? { importLimit: t.import_limit } : {}),
      ...(t.allow_network ? { allowNetwork: true } : {}),
    });
    if (!loaded.ok) throw new Error(loaded.error.message);
    tasks.set(t.path, loaded.value);
  }
  // Each task's image is built (or found cached), or pulled when the engine lacks it, once,
  // before any slot: the slots then start from the built tag, as a fork would.
  for (const [path, world] of tasks)
    if (options.images)
      tasks.set(path, {
        ...world,
        task: withoutBuild(
          await options.images.resolve(
            world.task,
            world.taskPath ?? join(world.dir, 'task.json'),
            options.onImageProgress ?? (() => undefined),
          ),
        ),
      });
  const queue = batch.slots.filter((s) => s.status === null);
  const total = batch.slots.length;
  const started = performance.now();
  let running = 0;
  const progress = () =>
    options.onProgress?.({
      done: batch.slots.filter((s) => s.status !== null).length,
      total,
      ok: batch.slots.filter((s) => s.status === 'succeeded').length,
      running,
      elapsedMs: performance.now() - started,
    });
  const sandboxes = new TaskSandboxes(options.supply);
  let failure: unknown = null;
  const runSlot = async (slot: BatchSlot) => {
    running++;
    // The episode's id is in batch.json before the episode exists: a kill at any later
    // moment leaves the store nothing the batch does not know (supersedePartial).
    slot.starting = Date.now();
    slot.episode = options.store.newEpisodeId();
    save();
    crashPoint('batch-slot-recorded');
    progress();
    let created = false;
    try {
      const world = tasks.get(slot.task)!;
      const out = await runEpisodeToEnd({
        task: world.task,
        taskPath: world.taskPath,
        worldWarnings: world.warnings,
        agentSpec: batch.agent,
        model: batch.model,
        ...(batch.agent_dir !== undefined ? { agentDir: batch.agent_dir } : {}),
        store: options.store,
        parts: options.parts,
        sandboxes,
        episodeId: slot.episode,
        ...(options.signal ? { signal: options.signal } : {}),
        onStart: () => {
          created = true;
        },
      });
      // A stopped episode is not a result: leave the slot for --resume. One that ended on
      // its own before the stop took hold is (its trace says so): it is not run again.
      if (out.end && out.end.status !== 'interrupted') {
        slot.status = out.end.status;
        slot.end_reason = out.end.end_reason;
        slot.steps = out.end.steps ?? null;
        slot.duration_ms = Math.round(out.durationMs);
        slot.starting = null;
      }
    } catch (e) {
      // Stopped before its episode was created: nothing ran, nothing to report.
      if (!(options.signal?.aborted && e instanceof HarnessError && e.code === 'cancelled')) throw e;
    } finally {
      // An episode that never came to exist leaves the slot as it was before it started.
      if (!created && slot.episode !== null && !options.store.hasEpisode(slot.episode))
        Object.assign(slot, { episode: null, starting: null });
      running--;
      save();
      progress();
    }
  };
  const worker = async () => {
    while (queue.length && !options.signal?.aborted && failure === null) {
      const slot = queue.shift()!;
      try {
        await runSlot(slot);
      } catch (e) {
        // Infrastructure failed (no Docker, no image): stop; the slot stays for --resume.
        failure ??= e;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(batch.concurrency, queue.length) }, worker));
  } finally {
    await sandboxes.close();
    await options.supply.close?.();
  }
  if (failure !== null) throw failure;
  return batch;
}

/** Per-task numbers of a batch: the summary table. */
export interface BatchSummaryRow {
  readonly task: string;
  readonly episodes: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly other: number;
  readonly unfinished: number;
  readonly mean_steps: number | null;
  readonly mean_duration_ms: number | null;
}

/** Summarizes a batch per task. */
export function summarizeBatch(batch: BatchFile): BatchSummaryRow[] {
  return batch.tasks.map((t) => {
    const slots = batch.slots.filter((s) => s.task === t.path);
    const done = slots.filter((s) => s.status !== null);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    return {
      task: t.name,
      episodes: slots.length,
      succeeded: done.filter((s) => s.status === 'succeeded').length,
      failed: done.filter((s) => s.status === 'failed').length,
      other: done.filter((s) => s.status !== 'succeeded' && s.status !== 'failed').length,
      unfinished: slots.length - done.length,
      mean_steps: mean(done.flatMap((s) => (s.steps === null ? [] : [s.steps]))),
      mean_duration_ms: mean(done.flatMap((s) => (s.duration_ms === null ? [] : [s.duration_ms]))),
    };
  });
}
