import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { StepDetail } from '../../../../shared/contract/models';
import { errorText } from '../result';

/** The inspector's tabs. */
export type InspectorTab = 'call' | 'output' | 'files' | 'request' | 'memory' | 'agent';

/**
 * Each tab's name, and the shorter one a narrow inspector shows (the tooltip keeps the name):
 * the inspector's tabs and a walkthrough that names one ("Inspector → Files tab") read this.
 */
export const INSPECTOR_TABS: readonly (readonly [InspectorTab, string, string])[] = [
  ['call', 'Call', 'Call'],
  ['output', 'Output', 'Output'],
  ['files', 'Files', 'Files'],
  ['memory', 'Memory', 'Memory'],
  ['request', 'Model request', 'Request'],
  ['agent', 'Agent output', 'Agent'],
];

/**
 * The tab shown: the one chosen, unless the open episode has no such tab (“Agent output”
 * exists only for an agent program of the person's own, exec:): then Call, so the next
 * episode's call is not hidden behind an empty tab. The choice is kept for the next episode
 * that has the tab.
 */
export function selectShownTab(tab: InspectorTab, hasAgentOutput: boolean): InspectorTab {
  return tab === 'agent' && !hasAgentOutput ? 'call' : tab;
}

/** The tool-call inspector: the viewed step's detail, the tab, the file being diffed. */
export interface InspectorState {
  readonly branch: string | null;
  readonly step: number | null;
  readonly detail: StepDetail | null;
  /** `running`: the step is being recorded and has nothing to show yet (not an error). */
  readonly load: 'idle' | 'loading' | 'running' | 'ready' | 'error';
  readonly error: string | null;
  readonly tab: InspectorTab;
  readonly diffPath: string | null;
}

/** What the inspector does. */
export interface InspectorActions {
  /**
   * Shows a step; `final` says the step is complete and its detail can be cached, under
   * `revision` (what the row shows: an injection or a person's command at a complete
   * step changes it, and the cached detail with it).
   */
  show(branch: string | null, step: number | null, final: boolean, revision?: string): Promise<void>;
  setTab(tab: InspectorTab): void;
  setDiffPath(path: string | null): void;
  /** Forgets cached details (after a rollback or reload). */
  invalidate(): void;
}

/** The inspector slice. */
export type InspectorStore = StoreApi<InspectorState & InspectorActions>;

const CACHE_MAX = 200;

/** Creates the inspector slice; complete steps' details are cached (scrubbing stays fast). */
export function createInspectorStore(client: StepboxClient): InspectorStore {
  const cache = new Map<string, StepDetail>();
  let inFlight = false;
  let wanted: { branch: string; step: number; final: boolean; key: string } | null = null;
  return createStore<InspectorState & InspectorActions>()((set, get) => ({
    branch: null,
    step: null,
    detail: null,
    load: 'idle',
    error: null,
    tab: 'call',
    diffPath: null,
    async show(branch, step, final, revision = '') {
      if (branch === null || step === null || step < 0) {
        wanted = null;
        set({ branch, step, detail: null, load: 'idle', error: null });
        return;
      }
      const key = `${branch}:${step}:${revision}`;
      const hit = final ? cache.get(key) : undefined;
      if (hit) {
        wanted = null;
        set({
          branch,
          step,
          detail: hit,
          load: 'ready',
          error: null,
          diffPath: firstFile(hit, get().diffPath),
        });
        return;
      }
      set({ branch, step, load: 'loading', error: null });
      wanted = { branch, step, final, key };
      // One request in flight: while scrubbing fast only the step last asked for is fetched next.
      if (inFlight) return;
      inFlight = true;
      try {
        while (wanted) {
          const want = wanted;
          wanted = null;
          const res = await client.episode.stepDetail({ id: want.branch, step: want.step });
          if (res.ok && want.final) {
            if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
            cache.set(want.key, res.value);
          }
          if (get().branch !== want.branch || get().step !== want.step) continue;
          if (res.ok)
            set({ detail: res.value, load: 'ready', diffPath: firstFile(res.value, get().diffPath) });
          // A step still being recorded may not be readable yet: it is running, not missing.
          else if (!want.final && res.error.code === 'not_found')
            set({ load: 'running', error: null, detail: null });
          else set({ load: 'error', error: errorText(res), detail: null });
        }
      } finally {
        inFlight = false;
      }
    },
    setTab: (tab) => set({ tab }),
    setDiffPath: (diffPath) => set({ diffPath }),
    invalidate() {
      cache.clear();
    },
  }));
}

/** Keeps the diffed file when the new step changed it too, else the step's first file. */
function firstFile(detail: StepDetail, current: string | null): string | null {
  if (current && detail.files.some((f) => f.path === current)) return current;
  return detail.files[0]?.path ?? null;
}
