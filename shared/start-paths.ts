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

/** The store's word in a path people read (the README's). */
const STORE = '$STEPBOX_HOME';

/**
 * The places paths are said from besides a task's folder: the store as `$STEPBOX_HOME` (the
 * README's word) and stepbox's bundled files as `resources`.
 */
export function pathRoots(
  storeHome?: string | null,
  bundled?: string | null,
  /** The opened projects (a folder or a task.json): each said from its folder's own name. */
  projects: readonly string[] = [],
): PathRoot[] {
  return [
    ...(storeHome ? [{ path: storeHome, as: STORE }] : []),
    ...(bundled ? [{ path: bundled, as: 'resources' }] : []),
    ...projects.map((p) => ownName(taskFolderOf(p))),
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

/** An absolute path in a message: after a start, a space, a quote, `(`, `=` or `:` (`scripted:/…`); a sentence's last `.`/`,` is not part of it. */
const PATH_IN_TEXT = /(^|[\s"'`(=:])(\/[^\s"'`()]*[^\s"'`().,;:])/g;

/**
 * A message (an error, a notice) as the window says it: each host path inside one of `roots`
 * said from there, by {@link pathForPeople}'s rule (`resources/tasks/hello-python/a.jsonl`), one
 * in the store by where in it (`cases/x/README.md in the store`). A path outside every root stays whole: that is
 * what a refusal is about (`/etc/passwd`). The whole text goes in the element's tooltip.
 */
export function peopleText(text: string, roots: readonly PathRoot[]): string {
  return pathsInText(text, (path) => inSentence(path, roots));
}

/**
 * A path as a sentence says it: from the innermost root that holds it, a file in the store by
 * where in the store it is (`shares/x.html in the store`, as the cards say it), the store itself
 * as `the store`. Notices read "Shared as $STEPBOX_HOME/shares/x.html", which reads as a
 * variable to expand, not a place; the full path stays in the tooltip.
 */
function inSentence(path: string, roots: readonly PathRoot[]): string | null {
  const said = fromRoots(path, roots);
  if (said === STORE) return 'the store';
  return said?.startsWith(`${STORE}/`) ? `${said.slice(STORE.length + 1)}${IN_STORE}` : said;
}

/** `text` with each absolute path in it said by `say` (null: left as it is). */
export function pathsInText(text: string, say: (path: string) => string | null): string {
  return text.replace(PATH_IN_TEXT, (all, lead: string, path: string) => {
    const said = say(path);
    return said === null ? all : `${lead}${said}`;
  });
}

/**
 * A resolved path as a task's card says it: inside the task's folder, from the folder's own
 * name (`hello-python/agent.jsonl`: where the task was found, not the host's whole path, which
 * goes in the card's tooltip); inside the store or the bundled files, from their words
 * (`$STEPBOX_HOME/scripts/a.jsonl`); anywhere else whole, since that is what the card warns of
 * (a start refuses it).
 */
export function pathOnCard(path: string, taskFolder: string, roots: readonly PathRoot[] = []): string {
  const said = fromRoots(path, cardRoots(taskFolder, roots));
  // The store's folders are named by whoever made them (`scripts-k3J9x`): the card says what
  // the file is and where it lives, the folder in the tooltip.
  return said?.startsWith(`${STORE}/`)
    ? `${path.slice(path.lastIndexOf('/') + 1)}${IN_STORE}`
    : (said ?? path);
}

/** How a card says a file is in the store, after its name (`a.jsonl in the store`). */
export const IN_STORE = ' in the store';

/** The roots a task's card says paths from: the task's folder by its own name, then `roots`. */
export function cardRoots(taskFolder: string, roots: readonly PathRoot[] = []): PathRoot[] {
  const folder = taskFolder.replace(/\/+$/, '');
  return [...(folder ? [ownName(folder)] : []), ...roots];
}

/** A folder files may be read from, and its name in an error (`the task's folder`, `the store`). */
export interface FilePlace {
  readonly path: string;
  readonly name: string;
  /**
   * A file (or folder) the person chose with Choose… in their own folders: readable for the
   * field it was chosen for, and not named in a refusal (it is one file, not a place to put one).
   */
  readonly chosen?: true;
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

/** The longest a refusal echoes a typed or resolved path whole. */
const ECHOED_PATH = 36;

/**
 * A path echoed in a sentence, cut in the middle when long (`scripted:…/../../etc/passwd`):
 * its start says what kind it is, its end which file. A typed `../../…/etc/passwd` of 50
 * characters made the refusal under the field about 8 lines at 1024 wide; the whole path is in
 * the field above it. Cuts fall at a `/` where one is near.
 */
export function elidePath(path: string, max = ECHOED_PATH): string {
  if (path.length <= max) return path;
  const keep = max - 1;
  let head = path.slice(0, Math.floor(keep / 3));
  const tail = path.slice(path.length - (keep - head.length));
  const cut = Math.max(head.lastIndexOf('/'), head.lastIndexOf(':'));
  if (cut > 0) head = head.slice(0, cut + 1);
  const from = tail.indexOf('/');
  if (from < 0 || from === tail.length - 1) return `${head}…${tail}`;
  return `${head}…/${tail.slice(from + 1)}`;
}

/**
 * The way forward a refusal of a path outside the places gives: Choose… browses the person's own
 * folders too, and the file picked there is the one stepbox may read for that field (a typed
 * path never is).
 */
export const OUTSIDE_FIX =
  'pick the file with Choose… → Your folders to let stepbox read it, or give a path inside one of them';

/** The refusal of a path outside `places` (`resolved`: where a relative one landed). Same words however it got there. */
export function outsideText(
  field: string,
  typed: string,
  landed: string | null,
  places: readonly FilePlace[],
): string {
  // The echo of what was typed is cut (it is in the field, or the request); where it lands is
  // what the refusal is about, whole.
  const said = elidePath(typed);
  const resolved = landed;
  return (
    `${field}: ${said}${resolved !== null ? ` resolves to ${resolved}, which is` : ' is'} outside the folders stepbox reads files from ` +
    `(${placesText(places)}); ${OUTSIDE_FIX}`
  );
}

/**
 * The places every start may read from besides the task's folder, named as a refusal names
 * them: the store, stepbox's bundled files, the opened projects' folders. The server's list
 * (file-fields.ts) and the start form's card build it here, so both say the same.
 */
export function commonPlaces(
  storeHome: string | null | undefined,
  bundled: string | null | undefined,
  projects: readonly string[],
): FilePlace[] {
  return [
    ...(storeHome ? [{ name: 'the store', path: storeHome }] : []),
    ...(bundled ? [{ name: "stepbox's bundled files", path: bundled }] : []),
    ...projects.map((p) => ({ name: 'an opened project', path: taskFolderOf(p) })),
  ];
}

/**
 * The places of an error, by name: `the task's folder, the store, stepbox's bundled files`. Their
 * paths read as syntax there ("the store $STEPBOX_HOME, stepbox's bundled files resources", once
 * said from the window's folders); {@link placesTitle} gives them, for a tooltip.
 */
function placesText(places: readonly FilePlace[]): string {
  const named = places.filter((p) => !p.chosen);
  return named.length ? [...new Set(named.map((p) => p.name))].join(', ') : 'no folder';
}

/** The places by name and path, one a line: the tooltip of a refusal that names them ({@link placesText}). */
export function placesTitle(places: readonly FilePlace[]): string {
  return places.map((p) => `${p.name}: ${p.path}`).join('\n');
}

/**
 * What every card would say, when they all say the same (a refusal of a path outside every place,
 * the one store file or folder every start reads, typed once in the form): said once, rather than
 * under each card. Null when some card says another or none.
 */
export function sameForAll(said: readonly (string | null)[]): string | null {
  const first = said[0] ?? null;
  return first !== null && said.every((r) => r === first) ? first : null;
}

/** The file a `scripted:FILE` spec names, unresolved (null for other specs). */
export function scriptOf(spec: string): string | null {
  const m = /^scripted:(.+)$/s.exec(spec.trim());
  return m ? m[1].trim() : null;
}

/**
 * The files (or folders) a person chose for one field with Choose… in their own folders, as
 * places of their own (the server's grants; the start form's card reads them the same).
 */
export function chosenPlaces(paths: Iterable<string>): FilePlace[] {
  return [...paths].map((path) => ({ path, name: 'a file you chose with Choose…', chosen: true as const }));
}

/** A grant as the rule reads it (the contract's `ChosenFile`): a field, a task's folder, a path. */
export interface Grant {
  readonly field: string;
  readonly task: string;
  readonly task_name: string;
  readonly path: string;
}

/**
 * A refusal of a path the person chose in Your folders for other tasks' starts (`grants`: all
 * of them), saying for which and the way forward: the rule's words alone read as if it had
 * never been chosen.
 */
export function chosenElsewhere(
  problem: string,
  grants: readonly Grant[],
  field: string,
  path: string,
  taskFolder: string | null,
): string {
  const names = [
    ...new Set(
      grants
        .filter((g) => g.field === field && g.path === path && g.task !== taskFolder)
        .map((g) => g.task_name),
    ),
  ];
  if (names.length === 0) return problem;
  const only = `chosen in Your folders for ${names.join(', ')} only`;
  // The refusal's general way forward (Choose… → Your folders) is this one's, said once: with
  // both, the refusal ran to ten lines in the library's column.
  const general = `; ${OUTSIDE_FIX}`;
  return problem.endsWith(general)
    ? `${problem.slice(0, -general.length)}: it was ${only}; choose it again for this task with Choose… → Your folders`
    : `${problem} (${only}: choose it again for this task)`;
}

/**
 * The grants that hold for `field` (its contract key, `agent`) on a start of the task in
 * `taskFolder` (null: none holds): a grant is for one field of one task's starts, never for
 * another project's. The server's rule and the start form's card both ask here.
 */
export function grantsFor<G extends Grant>(
  grants: readonly G[],
  field: string,
  taskFolder: string | null,
): G[] {
  if (taskFolder === null) return [];
  const folder = taskFolder.replace(/\/+$/, '');
  return grants.filter((g) => g.field === field && g.task.replace(/\/+$/, '') === folder);
}

/** The places a start on the task in `taskFolder` may read from: its folder first, then `common`. */
export function placesFor(taskFolder: string | null, common: readonly FilePlace[]): FilePlace[] {
  return [...(taskFolder ? [{ name: "the task's folder", path: taskFolder }] : []), ...common];
}

/**
 * Null when a typed `scripted:` path stays where a start may read from; otherwise the refusal
 * the start would give (see {@link placeProblem}), word for word. The start form's card says it
 * before the click, from the same places the server uses ({@link commonPlaces}); nothing is
 * read or stat'ed to say it (the server checks the real path too, and has the last word).
 */
export function scriptPlaceProblem(
  field: string,
  spec: string,
  taskFolder: string,
  common: readonly FilePlace[] = [],
): string | null {
  const file = scriptOf(spec);
  return file === null ? null : placeProblem(field, file, taskFolder, placesFor(taskFolder, common), spec);
}

/** The start form's agent fields by the names a person reads on screen (errors name them). */
export const AGENT_FIELD = 'Agent';
export const MODEL_FIELD = 'Its model calls answered by';
export const AGENT_DIR_FIELD = 'Agent folder';
/** A bare project folder's fields (the CLI's `--goal`, `--verify`), named as its card shows them. */
export const GOAL_FIELD = 'Goal';
export const CHECK_FIELD = 'Check (command)';
/** A start-form field by the name an error gives it. */
export type StartField = typeof AGENT_FIELD | typeof MODEL_FIELD | typeof AGENT_DIR_FIELD;
/** The start-form field a grant is for (`files.choose`'s `field`), by the name its refusals give it. */
export const CHOSEN_FIELD = { agent: AGENT_FIELD, model: MODEL_FIELD, agent_dir: AGENT_DIR_FIELD } as const;

/**
 * The start-form field an error names by its lead ("Agent: no file at …"), or null: the window
 * shows the error under that field, not under the card clicked (at 1024×700 a project's card
 * sat under the case panel, and the field to fix was at the panel's top).
 */
export function startFieldOf(message: string): StartField | null {
  // The engine's lead ("Agent: …"), or the window's words for the CLI's ("agent spec "x" …"
  // reads “Agent” "x" …, window-words.ts): that error showed under the card clicked.
  for (const field of [AGENT_DIR_FIELD, MODEL_FIELD, AGENT_FIELD] as const)
    if (message.startsWith(`${field}: `) || message.startsWith(`“${field}” `)) return field;
  return null;
}
/** A task the API names by its path (`episode.start`/`batch.start` task `{kind: "path", path}`). */
export const TASK_PATH_FIELD = 'task.path';
