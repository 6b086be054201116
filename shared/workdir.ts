import { DEFAULT_WORKDIR, RESERVED_PATHS } from './constants.js';

/**
 * Why `path` cannot be a sandbox's working directory (`sandbox.workdir`), or null when it
 * can: it must be absolute and normal (no `.`, `..`, empty parts or trailing `/`), not the
 * root, and neither lie under nor hold a path the sandbox or the system needs
 * ({@link RESERVED_PATHS}): the working directory is a tmpfs mounted over the image.
 */
export function workdirProblem(path: string): string | null {
  if (!path.startsWith('/')) return `"${path}" is not absolute; give a path such as "/app"`;
  if (path === '/')
    return 'the root cannot be the working directory (it is read-only); give a folder such as "/app"';
  const parts = path.slice(1).split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..'))
    return `"${path}" is not a normal path (empty, "." or ".." parts, or a trailing "/"); write it as "/app"`;
  for (const reserved of RESERVED_PATHS) {
    if (path === reserved || path.startsWith(reserved + '/') || reserved.startsWith(path + '/'))
      return `"${path}" overlaps ${reserved}, which the sandbox or the system needs; choose another folder such as "/app" or "${DEFAULT_WORKDIR}"`;
  }
  return null;
}

/** The working directory a task's sandbox section names, or the default. */
export function workdirOf(sandbox: { readonly workdir?: string }): string {
  return sandbox.workdir ?? DEFAULT_WORKDIR;
}

/**
 * A path inside the sandbox as the workspace sees it: relative to `workdir` (`.` for
 * `workdir` itself), or null when it lies outside.
 */
export function workspaceRelative(path: string, workdir: string): string | null {
  if (path === workdir) return '.';
  return path.startsWith(workdir + '/') ? path.slice(workdir.length + 1) : null;
}
