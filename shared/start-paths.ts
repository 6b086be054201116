/**
 * Where the window's start form reads a script from: the one documented place, the task's
 * folder (where `exec:` commands run too). Pure, so the form shows the resolved path
 * before the start and the server resolves it the same way.
 */

/** The folder a task file lives in (a task path may name the folder or its `.json`). */
export function taskFolderOf(taskPath: string): string {
  const p = taskPath.replace(/\/+$/, '');
  return /\.json$/i.test(p) ? p.replace(/\/[^/]*$/, '') || '/' : p;
}

/** `rel` resolved against the absolute folder `folder` (POSIX: `.` and `..` folded). */
export function resolveIn(folder: string, rel: string): string {
  const parts: string[] = [];
  for (const seg of `${rel.startsWith('/') ? '' : folder}/${rel}`.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return `/${parts.join('/')}`;
}

/** The file a `scripted:FILE` spec reads when started on the task in `taskFolder`; null for other specs. */
export function scriptPathOf(spec: string, taskFolder: string): string | null {
  const m = /^scripted:(.+)$/s.exec(spec.trim());
  return m ? resolveIn(taskFolder, m[1].trim()) : null;
}

/**
 * The folder a `sandbox:` agent's files come from (the form's "Agent folder", `--agent-dir`)
 * when started on the task in `taskFolder`; null when none is typed.
 */
export function agentFolderOf(dir: string, taskFolder: string): string | null {
  const d = dir.trim();
  return d ? resolveIn(taskFolder, d) : null;
}

/** The spec with a `scripted:` path made absolute from the task's folder; other specs unchanged. */
export function fromTaskFolder(spec: string, taskFolder: string): string {
  const path = scriptPathOf(spec, taskFolder);
  return path === null ? spec : `scripted:${path}`;
}
