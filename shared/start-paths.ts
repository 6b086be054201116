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

/**
 * Null when a `scripted:` path typed in the Replay panel's `field` is absolute (or the spec is
 * not `scripted:`); otherwise the refusal. A fork or reopen has no start form's task folder to
 * read from, and the server's working directory is no place a person can see: it was read
 * from there before.
 */
export function relativeScriptProblem(field: string, spec: string): string | null {
  const m = /^scripted:(.+)$/s.exec(spec.trim());
  if (!m || m[1].trim().startsWith('/')) return null;
  return `${field}: ${spec.trim()} is a relative path; here a scripted agent's file is named by its absolute path (scripted:/path/to/file.jsonl)`;
}

/** Whether absolute `path` is `folder` or inside it. */
function isInside(path: string, folder: string): boolean {
  const f = folder.replace(/\/+$/, '');
  return path === f || path.startsWith(`${f}/`);
}

/**
 * A resolved path as a task's card says it: inside the task's folder, from the folder's own
 * name (`hello-python/agent.jsonl`: where the task was found, not the host's whole path, which
 * goes in the card's tooltip); anywhere else whole, since that is what the card warns of.
 */
export function pathOnCard(path: string, taskFolder: string): string {
  const f = taskFolder.replace(/\/+$/, '');
  if (!isInside(path, f) || f === '') return path;
  const name = f.slice(f.lastIndexOf('/') + 1);
  return path === f ? name : `${name}/${path.slice(f.length + 1)}`;
}

/**
 * Null when a typed `scripted:` path stays where the form reads from; otherwise the refusal,
 * naming the form's `field`, the resolved path and the allowed places. A relative path is
 * read from the task's folder, so `..` that leaves it (and does not land in the store) is
 * refused before the start; an absolute path is the person's explicit choice.
 */
export function scriptPlaceProblem(
  field: string,
  spec: string,
  taskFolder: string,
  storeHome?: string,
): string | null {
  const m = /^scripted:(.+)$/s.exec(spec.trim());
  if (!m || m[1].trim().startsWith('/')) return null;
  const path = resolveIn(taskFolder, m[1].trim());
  if (isInside(path, taskFolder) || (storeHome !== undefined && isInside(path, storeHome))) return null;
  return (
    `${field}: ${spec.trim()} resolves to ${path}, outside the task's folder ${taskFolder}` +
    `${storeHome ? ` (and the store ${storeHome})` : ''}; choose a file with Choose… or give a path inside it`
  );
}

/** The start form's agent fields by the names a person reads on screen (errors name them). */
export const AGENT_FIELD = 'Agent';
export const MODEL_FIELD = 'Its model calls answered by';
