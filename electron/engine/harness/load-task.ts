import { readFileSync } from 'node:fs';
import { appError, type AppError } from '../../../shared/errors.js';
import { err, type Result } from '../../../shared/result.js';
import { parseTask, type Task } from '../../../shared/task.js';

/**
 * Reads a task file: JSON syntax errors name the line and column, schema errors name
 * the field and suggest the fix (shared/task.ts). A folder means its `task.json`.
 */
export function loadTask(path: string): Result<Task, AppError> {
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
    return err(appError('invalid_task', `${file} is not valid JSON: ${locate((e as Error).message, text)}`));
  }
  return parseTask(doc, file);
}

/** The task file a path names (a folder means its task.json). */
export function taskFilePath(path: string): string {
  return /\.json$/i.test(path) ? path : `${path.replace(/\/$/, '')}/task.json`;
}

/** Adds "line L column C" to a JSON.parse message that only gives a position. */
function locate(message: string, text: string): string {
  const m = /position (\d+)/.exec(message);
  if (!m) return message;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `${message.replace(/\s*\(line \d+ column \d+\)/, '')} (line ${line}, column ${column})`;
}
