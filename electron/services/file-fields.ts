import { realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative } from 'node:path';
import {
  chosenPlaces,
  outsideText,
  placeProblem,
  placesFor,
  resolveIn,
  scriptOf,
  type FilePlace,
} from '../../shared/start-paths.js';
import { ServiceError } from './service-error.js';

/** How many listed folders of the person's are remembered for a pick (the picker's recent ones). */
const MAX_LISTED = 64;

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
  /** The real folders the picker listed from the person's own folders (`files.list` `host`), latest last. */
  private readonly listed: string[] = [];
  /** Per field, the files (an agent folder: folders) the person chose there with Choose…, real paths. */
  private readonly chosen = new Map<string, Set<string>>();

  constructor(
    /** The places that hold for every task: the store, the bundled files, the opened folders. */
    private readonly common: () => Promise<readonly FilePlace[]>,
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
   * The person chose `path` with Choose… for `field`: from then on it (a file; for the agent
   * folder, a folder) is read for that field, as a place of its own. The grant comes from the
   * pick only: the path must be an entry of a folder the picker listed from the person's folders
   * (or, for a folder, one it listed), so a path typed in a form or sent to a start is never one.
   */
  async choose(field: string, path: string, kind: 'file' | 'folder'): Promise<string> {
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
    const set = this.chosen.get(field) ?? new Set<string>();
    set.add(typed);
    set.add(real);
    this.chosen.set(field, set);
    return typed;
  }

  /** The files the person chose for `field`, as places of their own (not named in a refusal). */
  private chosenFor(field: string): FilePlace[] {
    return chosenPlaces(this.chosen.get(field) ?? []);
  }

  /** `spec` with its `scripted:` file made absolute, checked by the rule (other specs unchanged). */
  async script(field: string, spec: string, taskFolder: string | null): Promise<string> {
    const file = scriptOf(spec);
    if (file === null) return spec;
    const path = await this.resolve(field, file, taskFolder, 'file', spec);
    return `scripted:${path}`;
  }

  /** A folder typed in `field` (an agent folder), absolute, checked by the rule. */
  folder(field: string, dir: string, taskFolder: string | null): Promise<string> {
    return this.resolve(field, dir.trim(), taskFolder, 'folder');
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
  ): Promise<string> {
    const places = [...(await this.placesFor(taskFolder)), ...this.chosenFor(field)];
    const problem = placeProblem(field, typed, taskFolder, places, shown);
    if (problem) throw new ServiceError('invalid_input', problem);
    const path = resolveIn(taskFolder ?? '/', typed);
    const real = await realpath(path).catch(() => null);
    if (real === null)
      throw new ServiceError(
        'not_found',
        `${field}: no ${kind === 'task' ? 'task file or folder' : kind} at ${path} — check the name or use Choose…`,
      );
    const roots = await Promise.all(places.map((p) => realpath(p.path).catch(() => p.path)));
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
