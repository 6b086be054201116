import { createStore, type StoreApi } from 'zustand/vanilla';

/** What the side-by-side view shows: candidates for a step, or two branches compared. */
export type SideBySideTab = 'candidates' | 'compare';

/**
 * The side-by-side view: candidates and compare get a view of their own over the centre
 * and right columns (at least half the window), instead of a scrolling corner of Replay.
 */
export interface SideBySideState {
  /** The tab shown; null when the view is closed and the panes show through. */
  readonly view: SideBySideTab | null;
}

/** What the side-by-side view does. */
export interface SideBySideActions {
  show(view: SideBySideTab): void;
  close(): void;
}

/** The side-by-side slice. */
export type SideBySideStore = StoreApi<SideBySideState & SideBySideActions>;

/** Creates the side-by-side slice (closed). */
export function createSideBySideStore(): SideBySideStore {
  return createStore<SideBySideState & SideBySideActions>()((set) => ({
    view: null,
    show: (view) => set({ view }),
    close: () => set({ view: null }),
  }));
}
