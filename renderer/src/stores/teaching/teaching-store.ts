import { ruleLabel } from '../../../../shared/qa/rule-label';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import { caseNameProblem } from '../../../../shared/case-name';
import { errorText } from '../result';
import { capital } from '../../../../shared/capital';
import type { NoticesStore } from '../notices/notices-store';

/**
 * The way out of a taken case name, said alike in the dialog and in the foot bar: the dialog's
 * Replace button, or another name (the bar once read "Save as case… again" beside a Replace).
 */
export const CONFLICT_WAY_OUT = 'press Replace to save this episode over it, or type another name.';

/** The Save as case / Share… dialogs: what is open, working, and what the last action said. */
export interface TeachingState {
  readonly dialog: 'none' | 'save';
  readonly busy: boolean;
  /** Why the save dialog's last try was refused (said in the dialog, where the name is fixed). */
  readonly refused: string | null;
  /** The name the last try found taken in the case library: the dialog offers to replace it. */
  readonly conflict: string | null;
  /** The last shared file, ready for the browser to save (an object URL and its name). */
  readonly download: { readonly url: string; readonly name: string; readonly bytes: number } | null;
}

/** What the dialogs do. */
export interface TeachingActions {
  openSave(): void;
  close(): void;
  /**
   * Saves the branch as a library case (stepbox case new); true when it was saved. `replace`
   * overwrites a library case of that name (the operation's force, the CLI's --force).
   */
  saveAsCase(branch: string, name: string, replace?: boolean): Promise<boolean>;
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
export function createTeachingStore(
  client: StepboxClient,
  onSaved: () => void,
  notices: NoticesStore,
): TeachingStore {
  // Outcomes go to the window's one notification area, tied to the branch they are about.
  const tell = (branch: string, kind: string, text: string, tone: 'info' | 'error'): void =>
    void notices.getState().post({ branch, kind, text, tone });
  // A refusal the open dialog says beside its name field: posted to the bar only when the dialog
  // closes without a save (the dialog and a red bar behind it said the same thing at once).
  let unsaid: { readonly branch: string; readonly text: string } | null = null;
  return createStore<TeachingState & TeachingActions>()((set, get) => ({
    dialog: 'none',
    busy: false,
    refused: null,
    conflict: null,
    download: null,
    onSaved,
    openSave: () => set({ dialog: 'save', refused: null, conflict: null }),
    close: () => {
      if (unsaid) tell(unsaid.branch, 'save-case', unsaid.text, 'error');
      unsaid = null;
      set({ dialog: 'none', refused: null, conflict: null });
    },
    async saveAsCase(branch, name, replace = false) {
      // A name the case library cannot take is said beside the field, once, and nothing is sent.
      const problem = caseNameProblem(name);
      if (problem) {
        set({ refused: problem, conflict: null });
        return false;
      }
      set({ busy: true, refused: null, conflict: null });
      const res = await client.cases.save(replace ? { id: branch, name, force: true } : { id: branch, name });
      if (!res.ok) {
        const text = errorText(res) ?? 'failed';
        // A taken name has a way out in the window, worded from the code (the engine's
        // message, shared with the CLI, only says what is wrong): replace it, or rename.
        const taken = res.error.code === 'conflict';
        set({
          busy: false,
          refused: taken ? `${capital(text)}. ${capital(CONFLICT_WAY_OUT)}` : text,
          conflict: taken ? name : null,
        });
        const said = taken
          ? `Not saved as a case: ${text}. In the Save as case dialog, ${CONFLICT_WAY_OUT}`
          : `Not saved as a case: ${text}`;
        if (get().dialog === 'save') unsaid = { branch, text: said };
        else tell(branch, 'save-case', said, 'error');
        return false;
      }
      unsaid = null;
      set({ busy: false, dialog: 'none', refused: null, conflict: null });
      tell(
        branch,
        'save-case',
        `Saved as case ${res.value.name} (QA flags ${res.value.rules.map(ruleLabel).join(', ')}); its walkthrough is ${res.value.dir}/README.md`,
        'info',
      );
      get().onSaved();
      return true;
    },
    async share(branch) {
      set({ busy: true });
      const res = await client.episode.share({ id: branch });
      if (!res.ok) {
        set({ busy: false });
        tell(branch, 'share', `Not shared: ${errorText(res) ?? 'failed'}`, 'error');
        return;
      }
      const old = get().download;
      if (old) URL.revokeObjectURL(old.url);
      const url = URL.createObjectURL(new Blob([res.value.html], { type: 'text/html' }));
      set({
        busy: false,
        download: { url, name: res.value.file_name, bytes: res.value.bytes },
      });
      tell(
        branch,
        'share',
        `Shared as ${res.value.path} (${(res.value.bytes / 1024).toFixed(1)} KiB; your browser downloads a copy): it opens offline in any browser`,
        'info',
      );
    },
  }));
}
