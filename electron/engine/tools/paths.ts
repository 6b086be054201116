import { posix } from 'node:path';
import { DEFAULT_WORKDIR } from '../../../shared/constants.js';

/** Where relative tool paths resolve when the task names no working directory. */
export const WORKSPACE = DEFAULT_WORKDIR;

/** Resolves a tool's path argument: relative paths against the working directory, `.` and `..` folded. */
export function resolveToolPath(path: string, workdir: string = WORKSPACE): string {
  return posix.resolve(workdir, path);
}
