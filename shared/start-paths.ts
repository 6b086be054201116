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

/** Whether absolute `path` is `folder` or inside it. */
function isInside(path: string, folder: string): boolean {
  const f = folder.replace(/\/+$/, '');
  return path === f || path.startsWith(`${f}/`);
}

/** A folder a path may be said from, and the words that stand for it (`$STEPBOX_HOME`, `resources`). */
export interface PathRoot {
  readonly path: string;
  readonly as: string;
}

/**
 * The places paths are said from besides a task's folder: the store as `$STEPBOX_HOME` (the
 * README's word) and stepbox's bundled files as `resources`.
 */
export function pathRoots(storeHome?: string | null, bundled?: string | null): PathRoot[] {
  return [
    ...(storeHome ? [{ path: storeHome, as: '$STEPBOX_HOME' }] : []),
    ...(bundled ? [{ path: bundled, as: 'resources' }] : []),
  ];
}

/** `path` said from `folder` as `as` (`hello-python/agent.jsonl`), or null when it is not inside. */
function pathFrom(path: string, folder: string, as: string): string | null {
  const f = folder.replace(/\/+$/, '');
  if (f === '' || !isInside(path, f)) return null;
  return path === f ? as : `${as}/${path.slice(f.length + 1)}`;
}

/** A folder as a root said by its own name (`/w/tasks/hello-python` → `hello-python`). */
function ownName(folder: string): PathRoot {
  const f = folder.replace(/\/+$/, '');
  return { path: f, as: f.slice(f.lastIndexOf('/') + 1) };
}

/** `path` said from the innermost of `roots` that holds it, or null when none does. */
function fromRoots(path: string, roots: readonly PathRoot[]): string | null {
  let best: PathRoot | null = null;
  for (const r of roots)
    if (pathFrom(path, r.path, r.as) !== null && (best === null || r.path.length > best.path.length))
      best = r;
  return best && pathFrom(path, best.path, best.as);
}

/**
 * A host path as a trace or the window says it to people (a shared trace or a screenshot must
 * not carry the person's host layout): from the innermost of `roots` that holds it, else from
 * the name of the folder it is in (`fatal-error/agent.jsonl`: a case's script beside its task).
 */
export function pathForPeople(path: string, roots: readonly PathRoot[] = []): string {
  const folder = path.slice(0, path.lastIndexOf('/'));
  return fromRoots(path, roots) ?? (folder ? fromRoots(path, [ownName(folder)]) : null) ?? path;
}

/**
 * A resolved path as a task's card says it: inside the task's folder, from the folder's own
 * name (`hello-python/agent.jsonl`: where the task was found, not the host's whole path, which
 * goes in the card's tooltip); inside the store or the bundled files, from their words
 * (`$STEPBOX_HOME/scripts/a.jsonl`); anywhere else whole, since that is what the card warns of
 * (a start refuses it).
 */
export function pathOnCard(path: string, taskFolder: string, roots: readonly PathRoot[] = []): string {
  const folder = taskFolder.replace(/\/+$/, '');
  return fromRoots(path, [...(folder ? [ownName(folder)] : []), ...roots]) ?? path;
}

/** A folder files may be read from, and its name in an error (`the task's folder`, `the store`). */
export interface FilePlace {
  readonly path: string;
  readonly name: string;
}

/**
 * The one rule for every path a person types in a form or sends to the API (a `scripted:` file,
 * a model source, an agent folder; issue 33, item 5): it is read only when it resolves — a
 * relative path against the task's folder — to a place inside one of `places` (the task's
 * folder, the store, stepbox's own bundled files, the folders the person opened). Null when it
 * does; otherwise the refusal, naming the field and the places. Decided before the disk is
 * touched, so it reads the same whether the path exists or not.
 */
export function placeProblem(
  field: string,
  typed: string,
  taskFolder: string | null,
  places: readonly FilePlace[],
  /** How the field's value is said back (default: the path; a spec says `scripted:PATH`). */
  shown?: string,
): string | null {
  const t = typed.trim();
  const said = shown?.trim() ?? t;
  if (t.includes('\0')) return `${field}: the path contains a NUL byte`;
  const relative = !t.startsWith('/');
  if (relative && taskFolder === null)
    return `${field}: ${said} is a relative path and there is no task folder to read it from; give an absolute path inside ${placesText(places)}`;
  const path = resolveIn(taskFolder ?? '/', t);
  if (places.some((p) => isInside(path, p.path))) return null;
  return outsideText(field, said, relative ? path : null, places);
}

/** The refusal of a path outside `places` (`resolved`: where a relative one landed). Same words however it got there. */
export function outsideText(
  field: string,
  said: string,
  resolved: string | null,
  places: readonly FilePlace[],
): string {
  return (
    `${field}: ${said}${resolved !== null ? ` resolves to ${resolved}, which is` : ' is'} outside the folders stepbox reads files from ` +
    `(${placesText(places)}); choose a file with Choose… or give a path inside one of them`
  );
}

/** The places of an error, by name and path. */
function placesText(places: readonly FilePlace[]): string {
  return places.length ? places.map((p) => `${p.name} ${p.path}`).join(', ') : 'no folder';
}

/** The file a `scripted:FILE` spec names, unresolved (null for other specs). */
export function scriptOf(spec: string): string | null {
  const m = /^scripted:(.+)$/s.exec(spec.trim());
  return m ? m[1].trim() : null;
}

/**
 * Null when a typed `scripted:` path stays where the form reads from; otherwise the refusal
 * (see {@link placeProblem}). The form's own check before a start: the task's folder and the
 * store only (the server knows the rest of the places and has the last word).
 */
export function scriptPlaceProblem(
  field: string,
  spec: string,
  taskFolder: string,
  storeHome?: string,
): string | null {
  const file = scriptOf(spec);
  if (file === null || file.startsWith('/')) return null;
  return placeProblem(
    field,
    file,
    taskFolder,
    [
      { name: "the task's folder", path: taskFolder },
      ...(storeHome !== undefined ? [{ name: 'the store', path: storeHome }] : []),
    ],
    spec,
  );
}

/** The start form's agent fields by the names a person reads on screen (errors name them). */
export const AGENT_FIELD = 'Agent';
export const MODEL_FIELD = 'Its model calls answered by';
export const AGENT_DIR_FIELD = 'Agent folder';
/** A start-form field by the name an error gives it. */
export type StartField = typeof AGENT_FIELD | typeof MODEL_FIELD | typeof AGENT_DIR_FIELD;

/**
 * The start-form field an error names by its lead ("Agent: no file at …"), or null: the window
 * shows the error under that field, not under the card clicked (at 1024×700 a project's card
 * sat under the case panel, and the field to fix was at the panel's top).
 */
export function startFieldOf(message: string): StartField | null {
  for (const field of [AGENT_DIR_FIELD, MODEL_FIELD, AGENT_FIELD] as const)
    if (message.startsWith(`${field}: `)) return field;
  return null;
}
/** A task the API names by its path (`episode.start`/`batch.start` task `{kind: "path", path}`). */
export const TASK_PATH_FIELD = 'task.path';
