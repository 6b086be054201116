import { readFileSync } from 'node:fs';
import { jsonSyntaxWhere, notParsedMessage } from '../json-error.js';
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
    // Where and why, never what: the parser's message quotes the file (see jsonSyntaxWhere).
    return err(
      appError(
        'invalid_task',
        notParsedMessage(
          file,
          'valid JSON',
          jsonSyntaxWhere(e, text),
          'fix it there (keys and strings in double quotes, a comma between entries and none after the last, no comments)',
        ),
      ),
    );
  }
  return parseTask(doc, file);
}

/** The task file a path names (a folder means its task.json). */
export function taskFilePath(path: string): string {
  return /\.json$/i.test(path) ? path : `${path.replace(/\/$/, '')}/task.json`;
}
