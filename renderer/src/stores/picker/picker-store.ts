import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { ChosenField, ChosenFile } from '../../../../shared/contract/models';
import type { ResponseOf } from '../../../../shared/contract/operations';
import { resolveIn, scriptOf } from '../../../../shared/start-paths';
import { errorText } from '../result';

/** The start-form field a pick fills: the agent (a script or a program), its model's script, a sandbox agent's folder. */
export type PickField = 'agent' | 'model' | 'agentDir';

/**
 * Where the picker looks: a bundled task's folder (where form paths resolve), the store, or the
 * person's own folders (`host`: any folder, as Open… browses; a file chosen there is granted).
 */
export type PickRoot = 'task' | 'store' | 'host';

/** A form field's grant key (`files.choose`'s `field`). */
export function grantField(field: PickField): ChosenField {
  return field === 'agentDir' ? 'agent_dir' : field;
}

/** A folder's listing as the server gave it. */
export type PickListing = ResponseOf<'files.list'>;

/** The file picker of the start form. */
export interface PickerState {
  /** The field being filled; null when the picker is closed. */
  readonly field: PickField | null;
  readonly root: PickRoot;
  /**
   * Whose folder `task` means: a bundled sample task by its id, or an opened project by its
   * absolute path (ids never start with `/`). Both are places a start reads from (commonPlaces).
   */
  readonly task: string | null;
  readonly listing: PickListing | null;
  readonly loading: boolean;
  readonly error: string | null;
  /**
   * What the server granted from picks in the person's folders, each for one field of one task's
   * starts (`files.chosen`: kept in the store, so a reload or a restart finds them again).
   */
  readonly chosen: readonly ChosenFile[];
}

/** What the picker does. */
export interface PickerActions {
  /** Opens the picker for a field, in the task's folder. */
  open(field: PickField, task: string | null): Promise<void>;
  /** Lists another folder (a path from the root). */
  browse(path: string): Promise<void>;
  setRoot(root: PickRoot): Promise<void>;
  setTask(task: string): Promise<void>;
  close(): void;
  /**
   * The path a pick writes into the form for `name` in the folder listed: relative to the
   * task's folder (where the form resolves paths), absolute in the store. Null when nothing is listed.
   */
  pathOf(name: string | null): string | null;
  /**
   * Takes `name` (null: the folder listed) for the field: its path, granted by the server first
   * when it is in the person's folders (`files.choose`); null, with the error shown, when refused.
   */
  take(name: string | null): Promise<string | null>;
  /** Asks the server for the grants in effect (`files.chosen`): as the window opens, and after a change. */
  loadChosen(): Promise<void>;
  /** Drops the grants of `path` for `field`, for every task (Forget, or the field cleared). */
  forget(field: PickField, path: string): Promise<void>;
  /**
   * The person changed the field from `before` to `after`: cleared, the file it named is no
   * longer chosen for it (its grants go); typed over, the grants stay for a pick back.
   */
  edited(field: PickField, before: string, after: string): Promise<void>;
}

/** The picker slice. */
export type PickerStore = StoreApi<PickerState & PickerActions>;

/** Creates the picker slice over the client (`files.list`, which never lists outside its roots). */
export function createPickerStore(client: StepboxClient): PickerStore {
  let loads = 0;
  return createStore<PickerState & PickerActions>()((set, get) => {
    const list = async (path: string): Promise<void> => {
      const { root, task } = get();
      const mine = ++loads;
      set({ loading: true, error: null });
      const res = await client.files.list({
        root,
        ...(root === 'task' && task
          ? { task: isProject(task) ? { kind: 'project', path: task } : { kind: 'sample', id: task } }
          : {}),
        ...(path ? { path } : {}),
      });
      if (mine !== loads) return;
      set(res.ok ? { loading: false, listing: res.value } : { loading: false, error: errorText(res) });
    };
    return {
      field: null,
      root: 'task',
      task: null,
      listing: null,
      loading: false,
      error: null,
      chosen: [],
      async open(field, task) {
        set({ field, root: 'task', task: task ?? get().task, listing: null, error: null });
        await list('');
      },
      browse: (path) => list(path),
      async setRoot(root) {
        set({ root, listing: null });
        await list('');
      },
      async setTask(task) {
        // In Your folders the task says whom a pick is for: the folder listed stays.
        if (get().root !== 'task') return set({ task });
        set({ task, listing: null });
        await list('');
      },
      close() {
        loads++;
        set({ field: null, listing: null, loading: false, error: null });
      },
      pathOf(name) {
        const l = get().listing;
        if (!l) return null;
        const rel = name === null ? l.path : l.path ? `${l.path}/${name}` : name;
        // The store's and a project's files are said whole: a path relative to that folder
        // would resolve against the folder of whatever task is started instead.
        const { root, task } = get();
        if (root !== 'task' || (task !== null && isProject(task))) return resolveIn(l.root, rel);
        return rel === '' ? '.' : rel;
      },
      async take(name) {
        const { field, root, task } = get();
        const path = get().pathOf(name);
        if (path === null || field === null || root !== 'host') return path;
        if (task === null) {
          set({ error: 'Say which task the file is for first (the task beside Your folders).' });
          return null;
        }
        const res = await client.files.choose({ field: grantField(field), path, task: taskRef(task) });
        if (!res.ok) {
          set({ error: errorText(res) });
          return null;
        }
        const g = res.value;
        const others = get().chosen.filter(
          (c) => !(c.field === g.field && c.task === g.task && c.path === g.path),
        );
        set({ chosen: [...others, g] });
        return g.path;
      },
      async loadChosen() {
        const res = await client.files.chosen({});
        // An older server keeps no grants: none are said.
        if (res.ok) set({ chosen: res.value.chosen });
      },
      async forget(field, path) {
        const res = await client.files.forget({ field: grantField(field), path });
        if (res.ok) await get().loadChosen();
      },
      async edited(field, before, after) {
        if (after.trim() !== '') return;
        const was = fileOf(field, before);
        if (was !== null && get().chosen.some((c) => c.field === grantField(field) && c.path === was))
          await get().forget(field, was);
      },
    };
  });
}

/** Whether the picker's `task` names an opened project (by its absolute path), not a sample's id. */
function isProject(task: string): boolean {
  return task.startsWith('/');
}

/** The picker's `task` as the contract names a task. */
function taskRef(task: string) {
  return isProject(task) ? { kind: 'project' as const, path: task } : { kind: 'sample' as const, id: task };
}

/**
 * The absolute file (folder) a field's value names, as a grant holds it: the agent's or model's
 * `scripted:FILE`, an `exec:` program's path, the agent folder itself; null when it names none.
 */
export function fileOf(field: PickField, value: string): string | null {
  const v = value.trim();
  if (field === 'agentDir') return v.startsWith('/') ? v : null;
  const script = scriptOf(v);
  if (script !== null) return script.startsWith('/') ? script : null;
  const program = /^exec:\s*(?:(?:python3|node|sh)\s+)?('(?:[^']|'\\'')*'|\S+)/.exec(v)?.[1];
  if (!program) return null;
  const path = program.startsWith("'") ? program.slice(1, -1).replace(/'\\''/g, "'") : program;
  return path.startsWith('/') ? path : null;
}

/** Shell-quotes a path for an `exec:` command when it needs it. */
function quoted(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * The field's new text after a pick: a script as `scripted:PATH`; a program for an `exec:`
 * agent as `exec:` and how to run it (by its extension); a folder as itself.
 */
export function pickedValue(field: PickField, current: string, path: string): string {
  if (field === 'agentDir') return path;
  if (field === 'agent' && /^exec:/.test(current.trim())) {
    const run = /\.py$/i.test(path)
      ? 'python3 '
      : /\.m?js$/i.test(path)
        ? 'node '
        : /\.sh$/i.test(path)
          ? 'sh '
          : path.includes('/')
            ? ''
            : './';
    return `exec:${run}${quoted(path)}`;
  }
  return `scripted:${path}`;
}
