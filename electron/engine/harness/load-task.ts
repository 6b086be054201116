import { readFileSync } from 'node:fs';
import { jsonErrorAt } from '../json-error.js';
import { appError, type AppError } from '../../../shared/errors.js';
import { basename, dirname } from 'node:path';
import { err, ok, type Result } from '../../../shared/result.js';
import { HARBOR_TASK_FILE, isHarborTaskDir, loadHarborTask, type HarborOptions } from './harbor-task.js';
import { parseTask, type Task } from '../../../shared/task.js';

/** A task as read from disk, with what the user should know about how it was read. */
export interface LoadedTask {
  readonly task: Task;
  /** Keys of the file stepbox does not know or honour (a Harbor task.toml's), one line each. */
  readonly notes: readonly string[];
}

/**
 * Reads a task: a task.json, or a Harbor task folder (its task.toml; harbor-task.ts), with
 * notes on what of it stepbox does not honour.
 */
export function loadTaskWithNotes(path: string, options: HarborOptions = {}): Result<LoadedTask, AppError> {
  if (basename(path) === HARBOR_TASK_FILE) {
    const harbor = loadHarborTask(dirname(path), options);
    return harbor.ok ? ok({ task: harbor.value.task, notes: harbor.value.notes }) : harbor;
  }
  const task = loadTask(path);
  return task.ok ? ok({ task: task.value, notes: [] }) : task;
}

/**
 * Reads a task file: JSON syntax errors name the line and column, schema errors name
 * the field and suggest the fix (shared/task.ts). A folder means its `task.json`, or its
 * task.toml for a Harbor task folder.
 */
export function loadTask(path: string): Result<Task, AppError> {
  if (basename(path) === HARBOR_TASK_FILE || isHarborTaskDir(path)) {
    const harbor = loadHarborTask(basename(path) === HARBOR_TASK_FILE ? dirname(path) : path);
    return harbor.ok ? ok(harbor.value.task) : harbor;
  }
  let text: string;
  const file = /\.json$/i.test(path) ? path : `${path.replace(/\/$/, '')}/task.json`;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    return err(
      appError(
        'not_found',
        `cannot read task file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      ),
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    // Where, never what: the parser's message quotes the file (see jsonErrorAt).
    return err(appError('invalid_task', `${file} is not valid JSON${jsonErrorAt(e, text)}`));
  }
  return parseTask(doc, file);
}

/** The task file a path names (a folder means its task.json, or a Harbor task folder its task.toml). */
export function taskFilePath(path: string): string {
  if (/\.json$/i.test(path) || basename(path) === HARBOR_TASK_FILE) return path;
  const dir = path.replace(/\/$/, '');
  return isHarborTaskDir(dir) ? `${dir}/${HARBOR_TASK_FILE}` : `${dir}/task.json`;
}
