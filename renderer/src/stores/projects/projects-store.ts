import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { Project } from '../../../../shared/contract/models';
import { errorText } from '../result';
import { safeStorage } from '../../model/safe-storage';
import { loadProjectDrafts, saveProjectDrafts } from './project-drafts-memory';

/** Open… and the projects opened with it. */
export interface ProjectsState {
  readonly projects: readonly Project[];
  /** The desktop app answers Browse… with a native dialog; web mode types the path. */
  readonly nativePicker: boolean;
  readonly dialog: boolean;
  /** The path typed in Open…. */
  readonly path: string;
  /** Completions of the typed path: whole paths (folders end in `/`). */
  readonly suggestions: readonly string[];
  /**
   * What Tab fills in, as a shell does: the longest start every completion shares (all of them,
   * not only those listed), or null when it adds nothing to the typed path (Tab then moves on).
   */
  readonly completion: string | null;
  readonly error: string | null;
  readonly opening: boolean;
  /** The Goal typed for each bare folder, by its path (remembered across a reload). */
  readonly goals: Readonly<Record<string, string>>;
  /** The Check (command) typed for each bare folder (the CLI's `--verify`), by its path. */
  readonly checks: Readonly<Record<string, string>>;
  /** Why the last Remove failed, by the project's path. */
  readonly removeError: { readonly path: string; readonly text: string } | null;
  /**
   * The project Open… just listed, by its path, until its card is brought into view: opened
   * under a long list at 1024×700, its card (and its "needs a goal") stayed out of sight.
   */
  readonly opened: string | null;
}

/** What Open… does. */
export interface ProjectsActions {
  load(): Promise<void>;
  openDialog(): void;
  close(): void;
  setPath(path: string): Promise<void>;
  /** Opens the typed path; true when it joined the list. */
  submit(): Promise<boolean>;
  /** The native dialog (desktop app), then opens its choice. */
  pick(): Promise<void>;
  setGoal(path: string, goal: string): void;
  setCheck(path: string, check: string): void;
  /** Forgets a project (it leaves the list); its folder on disk is never touched. */
  remove(path: string): Promise<boolean>;
  /** The opened project's card is in view: {@link ProjectsState.opened} is done with. */
  shownOpened(): void;
}

/** The projects slice. */
export type ProjectsStore = StoreApi<ProjectsState & ProjectsActions>;

/** Creates the projects slice over a client; the typed Goals and Checks are kept in `storage`. */
export function createProjectsStore(
  client: StepboxClient,
  storage: Pick<Storage, 'getItem' | 'setItem'> | null = safeStorage(),
): ProjectsStore {
  let asked = 0;
  const drafts = loadProjectDrafts(storage);
  return createStore<ProjectsState & ProjectsActions>()((set, get) => ({
    projects: [],
    nativePicker: false,
    dialog: false,
    path: '',
    suggestions: [],
    completion: null,
    error: null,
    opening: false,
    goals: drafts.goals,
    checks: drafts.checks,
    removeError: null,
    opened: null,
    shownOpened: () => set({ opened: null }),
    async load() {
      const res = await client.projects.list({});
      if (res.ok) set({ projects: res.value.projects, nativePicker: res.value.native_picker });
    },
    openDialog: () => set({ dialog: true, error: null }),
    // Cancel clears the typed path: the next Open… starts empty, not on a path given up on.
    close: () => set({ dialog: false, error: null, suggestions: [], completion: null, path: '' }),
    async setPath(path) {
      set({ path, error: null, completion: null });
      // Completion: the entries of the folder typed so far that start with the last part.
      if (!path.startsWith('/')) {
        set({ suggestions: [] });
        return;
      }
      const mine = ++asked;
      const cut = path.lastIndexOf('/');
      const folder = path.slice(0, cut + 1);
      const part = path.slice(cut + 1);
      const res = await client.projects.browse({ path: folder });
      if (mine !== asked) return;
      if (!res.ok) {
        set({ suggestions: [] });
        return;
      }
      const base = res.value.folder.endsWith('/') ? res.value.folder : `${res.value.folder}/`;
      const matches = res.value.entries
        .filter((e) => e.name.startsWith(part) && (part.startsWith('.') || !e.name.startsWith('.')))
        .map((e) => `${base}${e.name}${e.type === 'dir' ? '/' : ''}`);
      const shared = sharedStart(matches);
      set({
        suggestions: matches.slice(0, 50),
        completion: shared.length > path.length && shared.startsWith(path) ? shared : null,
      });
    },
    async submit() {
      const path = get().path.trim();
      if (!path) {
        set({ error: 'Path: type the path of a folder or a task.json' });
        return false;
      }
      set({ opening: true, error: null });
      const res = await client.projects.open({ path: path.length > 1 ? path.replace(/\/+$/, '') : path });
      if (!res.ok) {
        set({ opening: false, error: errorText(res) });
        return false;
      }
      set({ opening: false, dialog: false, path: '', suggestions: [], completion: null });
      await get().load();
      set({ opened: res.value.path });
      return true;
    },
    async pick() {
      const res = await client.projects.pick({});
      if (!res.ok) {
        set({ error: errorText(res) });
        return;
      }
      if (res.value.path === null) return;
      set({ path: res.value.path, completion: null });
      await get().submit();
    },
    setGoal(path, goal) {
      set({ goals: { ...get().goals, [path]: goal } });
      saveProjectDrafts(get(), path, storage);
    },
    setCheck(path, check) {
      set({ checks: { ...get().checks, [path]: check } });
      saveProjectDrafts(get(), path, storage);
    },
    async remove(path) {
      const res = await client.projects.remove({ path });
      if (!res.ok) {
        set({ removeError: { path, text: errorText(res) ?? '' } });
        return false;
      }
      // Forgotten with it: opened again later, its boxes start empty.
      const { [path]: _goal, ...goals } = get().goals;
      const { [path]: _check, ...checks } = get().checks;
      set({ removeError: null, goals, checks });
      saveProjectDrafts(get(), null, storage);
      await get().load();
      return true;
    },
  }));
}

/** The longest start all of `paths` share ('' for none). */
function sharedStart(paths: readonly string[]): string {
  if (paths.length === 0) return '';
  let end = paths[0].length;
  for (const p of paths) {
    let i = 0;
    while (i < end && i < p.length && p[i] === paths[0][i]) i++;
    end = i;
  }
  return paths[0].slice(0, end);
}
