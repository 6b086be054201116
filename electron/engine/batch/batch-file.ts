import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { EpisodeStatus } from '../../../shared/trace-events.js';
import { writeFileAtomic } from '../trace/durable-fs.js';
import { describeIssues } from '../../../shared/validation-issues.js';

/** One slot of a batch: the `index`-th episode of a task, and the episode that fills it. */
export const BatchSlot = z.object({
  /** The task file (absolute). */
  task: z.string(),
  task_name: z.string(),
  index: z.number().int().nonnegative(),
  /** The episode filling the slot; null until one starts. */
  episode: z.string().nullable(),
  /** Its status once it ended; null while pending or running (or cut off by a crash). */
  status: EpisodeStatus.nullable(),
  end_reason: z.string().nullable().default(null),
  steps: z.number().int().nonnegative().nullable().default(null),
  duration_ms: z.number().nullable().default(null),
  /** When the slot's current attempt began (before its episode had an id); null when idle. */
  starting: z.number().nullable().default(null),
  /** Episodes that once filled this slot but never finished (a killed batch); kept, not counted. */
  superseded: z.array(z.string()).default([]),
});
/** One slot of a batch. */
export type BatchSlot = z.infer<typeof BatchSlot>;

/** `batch.json`: what a batch ran, and which episode fills each (task, index) slot. */
export const BatchFile = z.object({
  format: z.literal('stepbox.batch/1'),
  id: z.string(),
  home: z.string(),
  created: z.number(),
  agent: z.string(),
  /** The `--model` source of an exec: agent. */
  model: z.string().optional(),
  /** The `--agent-dir` of a sandbox: agent, absolute (so `--resume` works from anywhere). */
  agent_dir: z.string().optional(),
  episodes: z.number().int().positive(),
  concurrency: z.number().int().positive(),
  /** Each task's path; a project folder without a task.json keeps the flags that made its task (`--goal`, …). */
  tasks: z.array(
    z.object({
      path: z.string(),
      name: z.string(),
      goal: z.string().optional(),
      verify: z.string().optional(),
      import_limit: z.string().optional(),
    }),
  ),
  slots: z.array(BatchSlot),
});
/** `batch.json`. */
export type BatchFile = z.infer<typeof BatchFile>;

/** The batch file's name inside its folder. */
export const BATCH_FILE = 'batch.json';

/** Reads a batch folder's `batch.json`; throws a message naming what is wrong. */
export function readBatchFile(dir: string): BatchFile {
  const path = join(dir, BATCH_FILE);
  if (!existsSync(path)) throw new Error(`${dir} is not a batch folder: it has no ${BATCH_FILE}`);
  const parsed = BatchFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success)
    throw new Error(`${path} is not a valid batch file: ${describeIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Writes `batch.json` atomically (a crash leaves the old or the new file, never half of one). */
export function writeBatchFile(dir: string, batch: BatchFile): void {
  mkdirSync(dir, { recursive: true });
  writeFileAtomic(join(dir, BATCH_FILE), JSON.stringify(batch, null, 2) + '\n');
}

/** True when a slot still needs an episode that ends. */
export function unfinished(slot: BatchSlot): boolean {
  return slot.status === null;
}

/** A slot not yet run: task `task` (its path) named `taskName`, episode number `index`. */
export function emptySlot(task: string, taskName: string, index: number): BatchSlot {
  return {
    task,
    task_name: taskName,
    index,
    episode: null,
    status: null,
    end_reason: null,
    steps: null,
    duration_ms: null,
    starting: null,
    superseded: [],
  };
}
