import type { AppStores } from '../stores/app-stores';

/** One line of the keyboard sheet: the keys and what they do. */
export interface KeyLine {
  readonly keys: readonly string[];
  readonly does: string;
}

/**
 * What Tab does in Open…'s path, as a shell does: the sheet and the dialog's hint both say it
 * (the hint said only "Tab completes.", what it filled in and when it moved on unsaid).
 */
export const OPEN_PATH_TAB = 'fill in what the matches share (their longest common start); again: move on';

/** The keyboard sheet ("?"): every key of the window, by what a person is doing. */
export const KEY_SHEET: readonly { readonly title: string; readonly lines: readonly KeyLine[] }[] = [
  {
    title: 'Start',
    lines: [
      { keys: ['/'], does: 'search the cases and sample tasks (the list filters as you type)' },
      { keys: ['Enter'], does: 'in the search box: go to the first match; on a case or task: start it' },
    ],
  },
  {
    title: 'Step',
    lines: [
      { keys: ['F10'], does: 'take one step, or run the held step' },
      { keys: ['F5'], does: 'continue' },
      { keys: ['Shift', 'F5'], does: 'stop the episode' },
      { keys: ['F9'], does: 'breakpoint on the selected step' },
      { keys: ['←', '→'], does: 'previous / next step (Alt+←/→ from a text field)' },
      { keys: ['E'], does: 'edit the held step’s arguments (or its answer)' },
      { keys: ['Ctrl', 'Enter'], does: 'in the held step’s editor: save the edit and run it' },
      { keys: ['P'], does: 'switch “Pause before tools” on or off' },
      { keys: ['I'], does: 'inject a message the agent reads at its next step' },
    ],
  },
  {
    title: 'Branch',
    lines: [
      { keys: ['B'], does: 'roll the sandbox back to the viewed step' },
      { keys: ['F'], does: 'fork a new branch from the viewed step' },
    ],
  },
  {
    title: 'Open…',
    lines: [
      {
        keys: ['Tab'],
        does: `in the path: ${OPEN_PATH_TAB}`,
      },
    ],
  },
  {
    title: 'Terminal',
    lines: [
      { keys: ['T'], does: 'type in the terminal (or Tab to it and press Enter)' },
      { keys: ['Esc'], does: 'leave the terminal; Tab and Shift+Tab pass it unless you entered it' },
    ],
  },
  { title: 'Help', lines: [{ keys: ['?'], does: 'show or hide this sheet' }] },
];

/**
 * The single keys that act on a control marked `aria-keyshortcuts` with that key (the
 * mark also tells a screen reader). Each is listed in {@link KEY_SHEET}.
 */
export const ACTION_KEYS: Readonly<Record<string, string>> = {
  '/': 'search the library',
  T: 'type in the terminal',
  E: 'edit the held step',
  I: 'inject a message',
  B: 'roll back',
  F: 'fork',
  P: 'switch “Pause before tools”',
};

const TEXT_INPUTS = new Set(['text', 'search', 'number', 'email', 'url', 'password', 'tel', '']);

/**
 * True when a key press types text where it lands (a text field, an editor, the shell): the
 * letters are theirs then. A checkbox, a slider or a button does not take letters.
 */
export function isTyping(target: EventTarget | null): boolean {
  if (typeof HTMLElement === 'undefined' || !(target instanceof HTMLElement)) return false;
  if (target.closest('.monaco-editor, .xterm') || target.isContentEditable) return true;
  if (target.tagName === 'TEXTAREA' || target.tagName === 'SELECT') return true;
  return target.tagName === 'INPUT' && TEXT_INPUTS.has((target.getAttribute('type') ?? '').toLowerCase());
}

/** The action key a key press means (`/`, `T`, …), `?` for the sheet, or null. */
export function actionKey(e: KeyboardEvent): string | null {
  if (e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return null;
  if (e.key === '?') return '?';
  if (e.shiftKey || e.key.length !== 1) return null;
  const k = e.key.toUpperCase();
  return k in ACTION_KEYS ? k : null;
}

/** True while the window waits on a modal (the stop question, the file picker, a dialog): keys do not act behind it. */
export function modalOpen(stores: AppStores): boolean {
  return (
    stores.episodes.getState().stopQuestion !== null ||
    stores.picker.getState().field !== null ||
    (typeof document !== 'undefined' && document.querySelector('[aria-modal="true"]') !== null)
  );
}

/** The controls marked with `key`, on screen. */
function marked(key: string): HTMLElement[] {
  return Array.from(document.querySelectorAll<HTMLElement>('[aria-keyshortcuts]')).filter(
    (el) =>
      (el.getAttribute('aria-keyshortcuts') ?? '').split(' ').includes(key) && el.getClientRects().length > 0,
  );
}

/** Why a control is disabled, as it says itself (its `data-why`, else its title). */
function whyDisabled(el: HTMLElement): string {
  return el.dataset.why ?? el.title ?? '';
}

/**
 * Acts on the first enabled control marked with `key`: a field gets focus, anything else
 * a click (and then the field it names in `data-key-focus`, if any). With only disabled
 * ones, or none, the status bar says why.
 */
export function runActionKey(stores: AppStores, key: string): void {
  const all = marked(key);
  const target = all.find(
    (el) => !(el as HTMLButtonElement).disabled && el.getAttribute('aria-disabled') !== 'true',
  );
  const explain = stores.stepper.getState().explain;
  if (!target) {
    const why = all.length ? whyDisabled(all[0]) : '';
    explain(`Cannot ${ACTION_KEYS[key]} now (${key}): ${why || 'nothing on screen offers it.'}`);
    return;
  }
  // A switch is flipped; a field gets the focus.
  if (target instanceof HTMLInputElement && target.type === 'checkbox') target.click();
  else if (['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName)) target.focus();
  else target.click();
  const next = target.dataset.keyFocus;
  if (next)
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-testid="${next}"]`)?.focus());
}

/**
 * Listens for the action keys and `?` on `window` (bubble phase: a focused field that
 * takes the key has it first; text fields, editors and the terminal never see them acted on).
 */
export function installActionKeys(stores: AppStores, toggleSheet: () => void): () => void {
  const onKey = (e: KeyboardEvent): void => {
    // A question or the file picker is answered first: no key acts behind it.
    if (e.defaultPrevented || e.repeat || modalOpen(stores)) return;
    const key = actionKey(e);
    if (!key) return;
    e.preventDefault();
    if (key === '?') toggleSheet();
    else runActionKey(stores, key);
  };
  window.addEventListener('keydown', onKey);
  return () => window.removeEventListener('keydown', onKey);
}
