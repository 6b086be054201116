import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { EventOf } from '../../../../shared/contract/index';
import type { BranchSummary } from '../../../../shared/contract/models';

/** A live sandbox released for being idle, or because the last window closed (`episode.released`). */
export type Released = EventOf<'episode.released'>;

/** How long live sandboxes have been idle, and when one will be released (issue 33.8). */
export interface RunningState {
  /** Each live branch's last activity (epoch ms) as `episode.activity` said it since the library was read. */
  readonly activity: Readonly<Record<string, number>>;
  /** `ui.idle_release` in ms (null: off, or not known yet). */
  readonly idleReleaseMs: number | null;
  /** The settings file that sets it (`$STEPBOX_HOME/settings.json`), when known. */
  readonly settingsFile: string | null;
  /** The store's folder: the start cards name a script inside it from `$STEPBOX_HOME`. */
  readonly storeHome: string | null;
  /** stepbox's bundled files (`resources/`): the start cards name a folder inside them from there. */
  readonly bundledDir: string | null;
}

/** What the running slice does. */
export interface RunningActions {
  /** Reads the settings in effect (the idle limit the Running list counts towards). */
  loadSettings(): Promise<void>;
  dispose(): void;
}

/** The running slice. */
export type RunningStore = StoreApi<RunningState & RunningActions>;

/** When a live branch was last active: the newest of what the library and the events said (its start at worst). */
export function selectLastActive(
  s: Pick<RunningState, 'activity'>,
  b: Pick<BranchSummary, 'branch' | 'created' | 'last_active'>,
): number {
  return Math.max(s.activity[b.branch] ?? 0, b.last_active ?? 0, b.created);
}

/**
 * Creates the running slice: it follows `episode.activity` (thinned to about once a second by
 * the server) and hands each `episode.released` to `onReleased` (the window's notice).
 */
export function createRunningStore(
  client: StepboxClient,
  onReleased: (released: Released) => void = () => undefined,
): RunningStore {
  const store = createStore<RunningState & RunningActions>()((set) => ({
    activity: {},
    idleReleaseMs: null,
    settingsFile: null,
    storeHome: null,
    bundledDir: null,
    async loadSettings() {
      const res = await client.settings.get({});
      // Without it the list shows ages and idle times, only not the release to come.
      if (res.ok)
        set({
          idleReleaseMs: res.value.idle_release_ms,
          settingsFile: res.value.file,
          storeHome: res.value.home,
          bundledDir: res.value.bundled,
        });
    },
    dispose() {
      offActivity();
      offReleased();
    },
  }));
  const offActivity = client.onEpisodeActivity(({ branch, last_active }) => {
    const { activity } = store.getState();
    if ((activity[branch] ?? 0) < last_active)
      store.setState({ activity: { ...activity, [branch]: last_active } });
  });
  const offReleased = client.onEpisodeReleased((released) => {
    const { [released.branch]: _gone, ...rest } = store.getState().activity;
    store.setState({ activity: rest });
    onReleased(released);
  });
  return store;
}
