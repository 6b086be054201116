import { createStore, type StoreApi } from 'zustand/vanilla';
import type { AgentProgress, AgentView } from '../../../../shared/contract/agents';
import type { StepboxClient } from '../../../../shared/contract/client';
import { errorText } from '../result';

/** What the last Add or Remove of an agent came to, said on its row. */
export interface AgentNote {
  /** `info`: the person's own doing (a cancel), said without alarm. */
  readonly kind: 'ok' | 'info' | 'error';
  readonly text: string;
}

/** The Agents panel: every recipe with its installs, installs in progress, the last outcome per agent. */
export interface AgentsState {
  readonly open: boolean;
  readonly agents: readonly AgentView[];
  readonly loaded: boolean;
  /** The list could not be read (the message says why). */
  readonly error: string | null;
  /** Installs running, by name, with their last progress (null until the first arrives). */
  readonly installing: Readonly<Record<string, AgentProgress | null>>;
  readonly removing: Readonly<Record<string, true>>;
  readonly notes: Readonly<Record<string, AgentNote>>;
}

/** What the Agents panel does. */
export interface AgentsActions {
  setOpen(open: boolean): void;
  refresh(): Promise<void>;
  install(name: string): Promise<void>;
  cancel(name: string): Promise<void>;
  remove(name: string): Promise<void>;
  dispose(): void;
}

/** The agents slice. */
export type AgentsStore = StoreApi<AgentsState & AgentsActions>;

/** The names of the installed agents (what the Agent field offers). */
export function selectInstalledNames(s: Pick<AgentsState, 'agents'>): string[] {
  return s.agents.filter((a) => a.installed.length > 0).map((a) => a.name);
}

/** Bytes as a person reads them: 0 B, 12 KB, 3.4 MB, 1.2 GB. */
export function sizeText(bytes: number | null): string {
  if (bytes === null) return 'size unknown';
  const units = ['B', 'KB', 'MB', 'GB'];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u += 1;
  }
  return `${u === 0 || n >= 10 ? Math.round(n) : n.toFixed(1)} ${units[u]}`;
}

/** Creates the agents slice over a client; its progress stream ends with dispose. */
export function createAgentsStore(client: StepboxClient): AgentsStore {
  let generation = 0;
  let off = (): void => {};
  const store = createStore<AgentsState & AgentsActions>()((set, get) => ({
    open: false,
    agents: [],
    loaded: false,
    error: null,
    installing: {},
    removing: {},
    notes: {},
    setOpen(open) {
      set({ open });
      if (open) void get().refresh();
    },
    async refresh() {
      const mine = ++generation;
      const res = await client.agents.list();
      if (mine !== generation) return;
      if (!res.ok) {
        set({ error: errorText(res), loaded: true });
        return;
      }
      // An install started elsewhere (another window, a reload) shows as running too.
      const installing = { ...get().installing };
      for (const a of res.value.agents)
        if (a.installing && !(a.name in installing)) installing[a.name] = null;
      set({ agents: res.value.agents, loaded: true, error: null, installing });
    },
    async install(name) {
      if (name in get().installing) return;
      set({
        installing: { ...get().installing, [name]: null },
        notes: without(get().notes, name),
      });
      const res = await client.agents.install({ name });
      set({ installing: without(get().installing, name) });
      if (res.ok) {
        const v = res.value;
        const text =
          v.action === 'unchanged'
            ? `${v.name} ${v.version} is installed and up to date`
            : `${v.action} ${v.name} ${v.version} (${sizeText(v.bytes)}): type “${v.name}” in the Agent field`;
        set({ notes: { ...get().notes, [name]: { kind: 'ok', text } } });
      } else {
        const kind = res.error.code === 'cancelled' ? 'info' : 'error';
        set({ notes: { ...get().notes, [name]: { kind, text: errorText(res) ?? 'failed' } } });
      }
      await get().refresh();
    },
    async cancel(name) {
      const res = await client.agents.cancelInstall({ name });
      if (!res.ok) set({ notes: { ...get().notes, [name]: { kind: 'error', text: errorText(res) ?? '' } } });
    },
    async remove(name) {
      set({ removing: { ...get().removing, [name]: true }, notes: without(get().notes, name) });
      const res = await client.agents.remove({ name });
      set({ removing: without(get().removing, name) });
      set({
        notes: {
          ...get().notes,
          [name]: res.ok
            ? { kind: 'ok', text: `removed ${name} ${res.value.removed.join(', ')}` }
            : { kind: 'error', text: errorText(res) ?? 'failed' },
        },
      });
      await get().refresh();
    },
    dispose() {
      off();
    },
  }));
  off = client.onAgentsProgress((p) => {
    const { installing } = store.getState();
    if (p.name in installing && p.phase !== 'done')
      store.setState({ installing: { ...installing, [p.name]: p } });
  });
  return store;
}

function without<T>(record: Readonly<Record<string, T>>, key: string): Record<string, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}
