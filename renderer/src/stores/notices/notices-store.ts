import { createStore, type StoreApi } from 'zustand/vanilla';

/** One message for a person: what an action did or why it failed, about one episode (or none). */
export interface Notice {
  readonly id: number;
  readonly text: string;
  readonly tone: 'info' | 'error';
  /** The branch it is about; null for the window itself (cleared only by dismissing it). */
  readonly branch: string | null;
  /** Where it came from (`share`, `save-case`, `idle-release`…): a newer one of the same kind replaces it. */
  readonly kind: string;
  /** The way forward it offers, as a button beside it (`Reopen at step 3`); pressing it dismisses the notice. */
  readonly action?: { readonly label: string; readonly run: () => void };
}

/**
 * The branch of a notice about the episode being started, before it has one (a task's image
 * built or pulled for the start): the next branch shown takes it as its own, so opening another
 * episode clears it ("Image stepbox-build:… built" stayed at the window's foot for good).
 */
export const NEXT_BRANCH = '(the episode being started)';

/** The notification area: messages in the order they came, newest last. */
export interface NoticesState {
  readonly items: readonly Notice[];
}

/** What the notification area does. */
export interface NoticesActions {
  /** Shows a message; one of the same kind and branch is replaced, not stacked. Returns its id. */
  post(notice: Omit<Notice, 'id'>): number;
  dismiss(id: number): void;
  /** Another branch is on screen: messages about other branches go (the window's own stay). */
  follow(branch: string | null): void;
}

/** The notices slice. */
export type NoticesStore = StoreApi<NoticesState & NoticesActions>;

/** At most this many show; older ones make way (each can still be dismissed sooner). */
export const MAX_NOTICES = 3;

/**
 * One place for messages (issue 33, item 1): they sit in a bar of their own at the foot of the
 * window, never over a control, each with a dismiss button, tied to the episode they are about.
 */
export function createNoticesStore(): NoticesStore {
  let next = 1;
  return createStore<NoticesState & NoticesActions>()((set, get) => ({
    items: [],
    post(notice) {
      const id = next++;
      const kept = get().items.filter((n) => !(n.kind === notice.kind && n.branch === notice.branch));
      set({ items: [...kept, { ...notice, id }].slice(-MAX_NOTICES) });
      return id;
    },
    dismiss(id) {
      set({ items: get().items.filter((n) => n.id !== id) });
    },
    follow(branch) {
      const was = get().items;
      const items = was
        .map((n) => (n.branch === NEXT_BRANCH && branch !== null ? { ...n, branch } : n))
        .filter((n) => n.branch === null || n.branch === branch || n.branch === NEXT_BRANCH);
      if (items.length !== was.length || items.some((n, i) => n !== was[i])) set({ items });
    },
  }));
}
