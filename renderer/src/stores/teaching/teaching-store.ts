import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import { errorText } from '../result';

/** The Save as case / Share… dialogs: what is open, working, and what the last action said. */
export interface TeachingState {
  readonly dialog: 'none' | 'save';
  readonly busy: boolean;
  /** The last outcome, for a person: the case saved, the file's size, or the error. */
  readonly note: { readonly text: string; readonly error: boolean } | null;
  /** The last shared file, ready for the browser to save (an object URL and its name). */
  readonly download: { readonly url: string; readonly name: string; readonly bytes: number } | null;
}

/** What the dialogs do. */
export interface TeachingActions {
  openSave(): void;
  close(): void;
  /** Saves the branch as a library case (stepbox case new); true when it was saved. */
  saveAsCase(branch: string, name: string): Promise<boolean>;
  /** Makes the branch's self-contained HTML file (stepbox share) and offers it as a download. */
  share(branch: string): Promise<void>;
  /** Called once the case list should show a saved case. */
  readonly onSaved: () => void;
}

/** The teaching slice. */
export type TeachingStore = StoreApi<TeachingState & TeachingActions>;

/**
 * Save as case and Share… over the client: the same operations as `stepbox case new` and
 * `stepbox share`. A shared file becomes an object URL the window offers as a download.
 */
export function createTeachingStore(client: StepboxClient, onSaved: () => void): TeachingStore {
  return createStore<TeachingState & TeachingActions>()((set, get) => ({
    dialog: 'none',
    busy: false,
    note: null,
    download: null,
    onSaved,
    openSave: () => set({ dialog: 'save', note: null }),
    close: () => set({ dialog: 'none' }),
    async saveAsCase(branch, name) {
      set({ busy: true, note: null });
      const res = await client.cases.save({ id: branch, name });
      if (!res.ok) {
        set({ busy: false, note: { text: errorText(res) ?? 'failed', error: true } });
        return false;
      }
      set({
        busy: false,
        dialog: 'none',
        note: {
          text: `Saved as case ${res.value.name} (raises ${res.value.rules.join(', ')}); finish its walkthrough in ${res.value.dir}/README.md`,
          error: false,
        },
      });
      get().onSaved();
      return true;
    },
    async share(branch) {
      set({ busy: true, note: null });
      const res = await client.episode.share({ id: branch });
      if (!res.ok) {
        set({ busy: false, note: { text: errorText(res) ?? 'failed', error: true } });
        return;
      }
      const old = get().download;
      if (old) URL.revokeObjectURL(old.url);
      const url = URL.createObjectURL(new Blob([res.value.html], { type: 'text/html' }));
      set({
        busy: false,
        download: { url, name: res.value.file_name, bytes: res.value.bytes },
        note: {
          text: `${res.value.file_name}: ${(res.value.bytes / 1024).toFixed(1)} KiB, opens offline in any browser`,
          error: false,
        },
      });
    },
  }));
}
