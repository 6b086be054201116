import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { appError, type AppError } from '../../shared/errors.js';
import { err, ok, type Result } from '../../shared/result.js';
import type { WorkspaceFile } from '../../shared/task.js';

/**
 * The most a folder read as task files may hold: they travel in the task, recorded in every
 * trace (a Harbor task's tests/, the oracle's solution/).
 */
export const FOLDER_FILES_MAX_BYTES = 64 * 1024 * 1024;

/** The files of `dir` (recursively) as task files, text or base64; symlinks and special files are refused. */
export function readFolderFiles(dir: string, what: string): Result<Record<string, WorkspaceFile>, AppError> {
  const files: Record<string, WorkspaceFile> = {};
  let total = 0;
  const walk = (d: string): AppError | null => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const rel = relative(dir, path).split('\\').join('/');
      const st = lstatSync(path);
      if (st.isDirectory()) {
        const e = walk(path);
        if (e) return e;
        continue;
      }
      if (!st.isFile())
        return appError(
          'invalid_task',
          `${what}/${rel} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; put the file itself there`,
        );
      total += st.size;
      if (total > FOLDER_FILES_MAX_BYTES)
        return appError(
          'invalid_task',
          `${what} holds more than ${FOLDER_FILES_MAX_BYTES / 1024 / 1024} MiB (at ${rel}); the verifier's files travel in every trace, so keep big data in the image`,
        );
      const bytes = readFileSync(path);
      const text = bytes.toString('utf8');
      files[rel] = Buffer.from(text, 'utf8').equals(bytes) ? text : { base64: bytes.toString('base64') };
    }
    return null;
  };
  const e = walk(dir);
  return e ? err(e) : ok(files);
}
