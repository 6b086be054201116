import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative } from 'node:path';
import type { ChosenField, ChosenFile } from '../../shared/contract/models.js';
import {
  CHOSEN_FIELD,
  chosenElsewhere,
  chosenPlaces,
  outsideText,
  placeProblem,
  placesFor,
  resolveIn,
  scriptOf,
  type FilePlace,
} from '../../shared/start-paths.js';
import type { ChosenFiles } from './chosen-files.js';
import { ServiceError } from './service-error.js';

/** How many listed folders of the person's are remembered for a pick (the picker's recent ones). */
const MAX_LISTED = 64;

/** A field's grant key by the name its refusals give it (`Agent` → `agent`); null for a field no pick fills. */
function grantKey(field: string): ChosenField | null {
  const found = Object.entries(CHOSEN_FIELD).find(([, name]) => name === field);
  return found ? (found[0] as ChosenField) : null;
}

/** True when `p` is `root` or inside it (both real, absolute). */
function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The one resolver for every path a form or the API hands the engine to read (issue 33, item
 * 5): `scripted:` agents and model sources, the agent folder of a `sandbox:` agent, a task
 * the API names by its path — on start, batch, fork and reopen alike. The rule (shared/start-paths.ts `placeProblem`): a relative path
 * is read from the task's folder; any path must land inside the task's folder, the store,
 * stepbox's bundled files or a folder the person opened. It is checked on the path as typed
 * before the disk is touched and again on its real path (a symlink out is refused the same
 * way), so a refusal never says whether a file outside exists.
 */
export class FileFields {
  /**
   * The real folders the picker listed from the person's own folders (`files.list` `host`) in
   * this run, latest last: in memory only, so a pick is made by a person browsing now — never
   * by a file in the store, a trace or a bundle.
   */
  private readonly listed: string[] = [];

  constructor(
    /** The places that hold for every task: the store, the bundled files, the opened folders. */
    private readonly common: () => Promise<readonly FilePlace[]>,
    /** The grants Choose… made, kept in the store (chosen-files.ts). */
    private readonly chosen: ChosenFiles,
  ) {}

  /** The places for a task in `taskFolder` (null: no task folder, e.g. an imported trace). */
  async placesFor(taskFolder: string | null): Promise<FilePlace[]> {
    return placesFor(taskFolder, await this.common());
  }

  /** The picker listed `folder` (real, absolute) from the person's folders: its entries may be chosen. */
  listedHost(folder: string): void {
    const at = this.listed.indexOf(folder);
    if (at >= 0) this.listed.splice(at, 1);
    this.listed.push(folder);
    if (this.listed.length > MAX_LISTED) this.listed.shift();
  }

  /**
   * The person chose `path` with Choose… for `field` of starts of the task in `taskFolder`: from
   * then on it (a file; for the agent folder, a folder) is read for that field of that task's
   * starts, as a place of its own, across restarts (chosen-files.ts), while it still resolves to
   * the real path it had when chosen. The grant comes from the pick only: the path must be an
   * entry of a folder the picker listed from the person's folders in this run (or, for a folder,
   * one it listed), so a path typed in a form, sent to a start, or written into the store is
   * never one.
   */
  async choose(
    key: ChosenField,
    path: string,
    kind: 'file' | 'folder',
    taskFolder: string,
  ): Promise<ChosenFile> {
    const field = CHOSEN_FIELD[key];
    const typed = path.trim();
    if (!isAbsolute(typed) || typed.includes('\0'))
      throw new ServiceError('invalid_input', `${field}: ${typed} is not an absolute path from the picker`);
    const real = await realpath(typed).catch(() => null);
    const found = real === null ? null : await stat(real).catch(() => null);
    if (real === null || found === null)
      throw new ServiceError('not_found', `${field}: no ${kind} at ${typed} — choose it again with Choose…`);
    // The folder the picker showed it in: by the path as picked (a symlink listed there) or its target.
    const shownIn = [dirname(typed), ...(kind === 'folder' ? [typed] : [])];
    const listed = await Promise.all(shownIn.map((f) => realpath(f).catch(() => f)));
    if (!listed.some((f) => this.listed.includes(f)))
      throw new ServiceError(
        'invalid_input',
        `${field}: ${typed} was not listed by Choose… — browse to its folder in Your folders and pick it there`,
      );
    if (kind === 'file' ? !found.isFile() : !found.isDirectory())
      throw new ServiceError('invalid_input', `${field}: ${typed} is not a ${kind} — choose a ${kind}`);
    return this.chosen.add({
      field: key,
      task: taskFolder,
      task_name: basename(taskFolder),
      path: typed,
      real,
      kind,
    });
  }

  /**
   * `spec` with its `scripted:` file made absolute, checked by the rule (other specs unchanged).
   * `recorded`: `taskFolder` is what a trace says its task was (a fork, a reopen): relative paths
   * resolve there, but it is no place of its own — a trace (an imported one, a bundle's) names
   * any folder, and must not make one readable.
   */
  async script(field: string, spec: string, taskFolder: string | null, recorded = false): Promise<string> {
    const file = scriptOf(spec);
    if (file === null) return spec;
    const path = await this.resolve(field, file, taskFolder, 'file', spec, recorded);
    return `scripted:${path}`;
  }

  /** A folder typed in `field` (an agent folder), absolute, checked by the rule (`recorded`: as {@link script}). */
  folder(field: string, dir: string, taskFolder: string | null, recorded = false): Promise<string> {
    return this.resolve(field, dir.trim(), taskFolder, 'folder', undefined, recorded);
  }

  /**
   * A task named by its path over the API (`episode.start`/`batch.start` with `{kind: "path"}`):
   * a task file or a project folder, by the same rule. There is no task folder for it to be
   * relative to, so a relative path is refused; an absolute one must be inside a place.
   */
  task(field: string, path: string): Promise<string> {
    return this.resolve(field, path.trim(), null, 'task');
  }

  private async resolve(
    field: string,
    typed: string,
    taskFolder: string | null,
    kind: 'file' | 'folder' | 'task',
    shown?: string,
    recorded = false,
  ): Promise<string> {
    const path = resolveIn(taskFolder ?? '/', typed);
    // A grant holds for its field of its task's starts, for the file chosen itself (a folder:
    // what is in it), by the path as picked or its real path then.
    const key = grantKey(field);
    const granted = (key === null ? [] : this.chosen.for(key, taskFolder)).filter(
      (g) => g.kind === 'folder' || path === g.path || path === g.real,
    );
    const named = await this.placesFor(recorded ? null : taskFolder);
    const places = [...named, ...chosenPlaces(granted.flatMap((g) => [g.path, g.real]))];
    const problem = placeProblem(field, typed, taskFolder, places, shown);
    if (problem)
      throw new ServiceError(
        'invalid_input',
        key === null ? problem : chosenElsewhere(problem, this.chosen.list(), key, path, taskFolder),
      );
    const real = await realpath(path).catch(() => null);
    if (real === null)
      throw new ServiceError(
        'not_found',
        `${field}: no ${kind === 'task' ? 'task file or folder' : kind} at ${path} — check the name or use Choose…`,
      );
    // A granted file is read while it resolves where it did when chosen (`real`, never resolved
    // again): a file swapped for a symlink out after the pick is refused like any path outside.
    const roots = [
      ...(await Promise.all(named.map((p) => realpath(p.path).catch(() => p.path)))),
      ...granted.map((g) => g.real),
    ];
    // Through a symlink out of the places: refused as if typed outside (same words).
    if (!roots.some((r) => inside(r, real)))
      throw new ServiceError(
        'invalid_input',
        outsideText(field, shown?.trim() ?? typed, typed.startsWith('/') ? null : path, places),
      );
    const found = await stat(real);
    const fits =
      kind === 'file'
        ? found.isFile()
        : kind === 'folder'
          ? found.isDirectory()
          : found.isFile() || found.isDirectory();
    if (!fits)
      throw new ServiceError(
        'not_found',
        `${field}: ${path} is not a ${kind === 'task' ? 'task file or folder' : kind} — check the name or use Choose…`,
      );
    return path;
  }
}
