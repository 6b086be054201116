import { existsSync, readFileSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Project } from '../../shared/contract/models.js';
import { folderTakesGoal, worldFacts } from '../engine/harness/load-world.js';
import { oracleSolutionDir } from '../engine/agents/oracle-agent.js';
import { ServiceError } from './service-error.js';
import { writeStoreFile } from './store-file.js';

/** How many opened projects are remembered. */
const MAX_RECENT = 20;
/** How many entries one folder lists for completion. */
const MAX_ENTRIES = 500;

/**
 * The projects a person opened with Open… (issue 30, item 6): a folder or a task.json by its
 * absolute path, remembered in the store (`projects.json`) so they stay listed after a
 * restart. An opened project is a place the one path rule reads from (file-fields.ts) and a
 * task the window may start; nothing else on the host is.
 */
export class ProjectsService {
  private recent: Project[];

  constructor(
    /** The store's folder; absent (fakes), the list lives in memory only. */
    private readonly storeHome: string | undefined,
    /** The desktop app's native dialog; absent in web mode. */
    private readonly pickPath?: () => Promise<string | null>,
  ) {
    this.recent = this.read();
  }

  /** The opened projects, most recent first. */
  list(): { projects: Project[]; native_picker: boolean } {
    return { projects: this.fresh().map(withProblem), native_picker: this.pickPath !== undefined };
  }

  /**
   * The list with each folder's kind read again from disk: a bare folder that got a task.json
   * (`stepbox task init` in a shell) stayed "folder" with a Goal box, its start refused with the
   * CLI's "--goal is for a folder without a task of its own", until it was opened again. A
   * changed kind is written back to projects.json.
   */
  private fresh(): Project[] {
    let changed = false;
    this.recent = this.recent.map((p) => {
      const kind = kindOnDisk(p.path);
      if (kind === null || kind === p.kind) return p;
      changed = true;
      return { ...p, kind, name: nameOf(p.path, kind) };
    });
    if (changed) void this.write().catch(() => undefined);
    return this.recent;
  }

  /** The project opened at exactly `path`, or a refusal saying how to open it. */
  find(path: string): Project {
    const found = this.fresh().find((p) => p.path === resolve(path));
    if (!found)
      throw new ServiceError(
        'not_found',
        `${path} is not an opened project: open it with Open… in the library first (projects.open)`,
      );
    return found;
  }

  /** Opens `path` (absolute): a folder or a `.json` task file; it joins the recent list. */
  async open(path: string): Promise<Project> {
    const typed = path.trim();
    if (!isAbsolute(typed) || typed.includes('\0'))
      throw new ServiceError(
        'invalid_input',
        `Path: ${typed} is not an absolute path; give the whole path (/home/you/project)`,
      );
    const abs = resolve(typed);
    const found = await stat(abs).catch(() => null);
    if (!found)
      throw new ServiceError(
        'not_found',
        `Path: nothing at ${abs} — check the path (a folder, or a task.json)`,
      );
    let kind: Project['kind'];
    // A folder is a task when it says what to do itself (a task.json, a Harbor task): it was
    // listed as a bare folder asking for a Goal, its instruction.md unread. The engine's readers decide.
    if (found.isDirectory()) kind = folderTakesGoal(abs) ? 'folder' : 'task';
    else if (found.isFile() && abs.endsWith('.json')) kind = 'task';
    else
      throw new ServiceError(
        'invalid_input',
        `Path: ${abs} is a file, not a folder or a task.json — open the folder it is in, or its task.json`,
      );
    const project: Project = { path: abs, name: nameOf(abs, kind), kind, opened_at: Date.now() };
    this.recent = [project, ...this.recent.filter((p) => p.path !== abs)].slice(0, MAX_RECENT);
    await this.write();
    return withProblem(project);
  }

  /**
   * Forgets the project opened at `path` (the library's Remove): it leaves the list and
   * projects.json; its folder and files on disk are never touched.
   */
  async remove(path: string): Promise<{ removed: boolean }> {
    const abs = resolve(path);
    const before = this.recent.length;
    this.recent = this.recent.filter((p) => p.path !== abs);
    if (this.recent.length === before)
      throw new ServiceError('not_found', `${path} is not an opened project: nothing to remove`);
    await this.write();
    return { removed: true };
  }

  /** The folders and `.json` files of the folder `path` names (or of its parent, for a partial name). */
  async browse(path: string): Promise<{ folder: string; entries: { name: string; type: 'dir' | 'file' }[] }> {
    if (!isAbsolute(path) || path.includes('\0'))
      throw new ServiceError('invalid_input', `Path: ${path} is not an absolute path; start it with /`);
    const abs = resolve(path);
    const isDir = (await stat(abs).catch(() => null))?.isDirectory() ?? false;
    const folder = isDir && path.endsWith('/') ? abs : isDir ? abs : dirname(abs);
    const dirents = await readdir(folder, { withFileTypes: true }).catch(() => null);
    if (!dirents) throw new ServiceError('not_found', `Path: no folder at ${folder} to list`);
    const entries = dirents
      .filter((d) => d.isDirectory() || (d.isFile() && d.name.endsWith('.json')))
      .map((d) => ({ name: d.name, type: d.isDirectory() ? ('dir' as const) : ('file' as const) }))
      .sort((a, b) => a.name.localeCompare(b.name))
      .slice(0, MAX_ENTRIES);
    return { folder, entries };
  }

  /** The native dialog's choice (desktop app), opened like a typed path. */
  async pick(): Promise<{ path: string | null }> {
    if (!this.pickPath)
      throw new ServiceError('invalid_input', 'no native dialog in web mode: type the path in Open… instead');
    return { path: await this.pickPath() };
  }

  private file(): string | null {
    return this.storeHome ? join(this.storeHome, 'projects.json') : null;
  }

  private read(): Project[] {
    const file = this.file();
    if (!file || !existsSync(file)) return [];
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const list = (parsed as { projects?: unknown }).projects;
      if (!Array.isArray(list)) return [];
      return list
        .filter(
          (p): p is Project =>
            typeof p === 'object' &&
            p !== null &&
            typeof (p as Project).path === 'string' &&
            isAbsolute((p as Project).path) &&
            ((p as Project).kind === 'task' || (p as Project).kind === 'folder'),
        )
        .map((p) => ({
          path: p.path,
          name: typeof p.name === 'string' ? p.name : basename(p.path),
          kind: p.kind,
          opened_at: typeof p.opened_at === 'number' ? p.opened_at : 0,
        }))
        .slice(0, MAX_RECENT);
    } catch {
      // A damaged list starts empty (it is a convenience, rewritten on the next open).
      return [];
    }
  }

  private async write(): Promise<void> {
    const file = this.file();
    if (file) await writeStoreFile(file, { projects: this.recent });
  }
}

/**
 * The project with why its task cannot start and what of it stepbox leaves out, read now by
 * the engine's reader (worldFacts): a broken task.json was listed as startable, and its start
 * then refused for the agent first; a devcontainer's "forwardPorts is not honoured" reached
 * the CLI's stderr and never the window. A bare folder's files are read at its start. Not
 * kept in projects.json: the file may be fixed by the next listing.
 */
function withProblem(project: Project): Project {
  const { problem: _, warnings: __, oracle: ___, goal: ____, ...listed } = project;
  // How it is written, as the engine's readers see it now (a Harbor task, a devcontainer…).
  const facts = worldFacts(project.path);
  return {
    ...listed,
    world: facts.kind,
    oracle: oracleSolutionDir(project.path) !== null,
    ...(facts.problem ? { problem: facts.problem.message } : {}),
    ...(facts.warnings.length ? { warnings: [...facts.warnings] } : {}),
    ...(facts.goal !== null ? { goal: facts.goal } : {}),
  };
}

/** A folder's kind as the engine's readers see it now; a task.json stays a task; null when gone. */
function kindOnDisk(abs: string): Project['kind'] | null {
  try {
    return statSync(abs).isDirectory() ? (folderTakesGoal(abs) ? 'folder' : 'task') : 'task';
  } catch {
    // Gone or unreadable: kept as listed; its start says what is wrong.
    return null;
  }
}

/** A project's name: the folder's (a task.json's: its folder's). */
function nameOf(abs: string, kind: Project['kind']): string {
  return kind === 'task' && abs.endsWith('.json') ? basename(dirname(abs)) : basename(abs);
}
