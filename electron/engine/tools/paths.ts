import { posix } from 'node:path';

/** Where relative tool paths resolve. */
export const WORKSPACE = '/workspace';

/** Resolves a tool's path argument: relative paths against /workspace, `.` and `..` folded. */
export function resolveToolPath(path: string): string {
  return posix.resolve(WORKSPACE, path);
}
