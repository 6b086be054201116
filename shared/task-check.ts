import { z } from 'zod';
import type { EpisodeView } from './contract/models.js';
import { DEFAULT_VERIFIER_FILES_DIR } from './task.js';

// A trace's header is recorded input (untrusted): read field by field, never trusted to be a Task.
const RecordedCheck = z.object({
  verifier: z
    .object({
      command: z.string(),
      files: z.record(z.string(), z.unknown()).optional(),
      files_dir: z.string().optional(),
    })
    .nullable()
    .optional(),
});

/** What decides a recorded task's outcome: its verifier's command and the files only it sees, by name. */
export type TaskCheck = NonNullable<EpisodeView['check']>;

/**
 * What decides a recorded task's outcome (its verifier: command, and the files only it sees by
 * name): null when the task has none; undefined when the header has one it cannot read (then
 * the window says nothing rather than "none").
 */
export function taskCheckOf(task: Record<string, unknown>): EpisodeView['check'] {
  const r = RecordedCheck.safeParse(task);
  if (!r.success) return undefined;
  const v = r.data.verifier;
  if (!v) return null;
  return {
    command: v.command,
    files: Object.keys(v.files ?? {}).sort(),
    files_dir: v.files_dir ?? DEFAULT_VERIFIER_FILES_DIR,
  };
}
