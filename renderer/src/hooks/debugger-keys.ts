import { assertNever } from '../../../shared/assert-never';
import type { AppStores } from '../stores/app-stores';
import { modalOpen } from './action-keys';
import { selectHintBelowEnd, selectLastStep } from '../stores/stepper/stepper-store';
import { selectPersonDecides } from '../stores/stepper/agent-traits';

/** The debugger action a key press means, or null. */
export type DebuggerAction = 'step' | 'continue' | 'stop' | 'pause' | 'breakpoint' | 'previous' | 'next';

/** True when the key press targets something that edits text (arrows belong to it then). */
function isEditing(target: EventTarget | null): boolean {
  if (typeof HTMLElement === 'undefined' || !(target instanceof HTMLElement)) return false;
  // A focused splitter moves with the arrows too.
  if (target.closest('.monaco-editor, .xterm, [role="separator"]')) return true;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/** True when the key press targets the terminal or a Monaco editor. */
function inTerminalOrEditor(target: EventTarget | null): boolean {
  return (
    typeof Element !== 'undefined' &&
    target instanceof Element &&
    target.closest('.xterm, .monaco-editor') !== null
  );
}

/**
 * Maps a key press to a debugger action. F-keys act everywhere (the terminal too); the
 * arrows step through history unless a text field, editor or the shell has focus, where
 * they move the cursor — Alt+←/→ scrubs from anywhere.
 */
export function debuggerAction(e: KeyboardEvent): DebuggerAction | null {
  if (e.ctrlKey || e.metaKey) return null;
  switch (e.key) {
    case 'F10':
      return 'step';
    case 'F5':
      return e.shiftKey ? 'stop' : 'continue';
    case 'F9':
      return 'breakpoint';
    case 'Escape':
      // Escape in the terminal or an editor is theirs (the terminal's handler leaves it).
      return e.shiftKey || e.altKey || inTerminalOrEditor(e.target) ? null : 'pause';
    case 'ArrowLeft':
      return e.altKey || !isEditing(e.target) ? 'previous' : null;
    case 'ArrowRight':
      return e.altKey || !isEditing(e.target) ? 'next' : null;
    default:
      return null;
  }
}

/**
 * True when an action applies now: Escape pauses only a manual agent that is waiting for
 * the person's decision (elsewhere Escape keeps its usual meaning).
 */
export function actionApplies(stores: AppStores, action: DebuggerAction): boolean {
  if (action !== 'pause') return true;
  const s = stores.stepper.getState();
  return s.live && s.state === 'running' && selectPersonDecides(s);
}

/** Runs a debugger action against the slices. */
export function runDebuggerAction(stores: AppStores, action: DebuggerAction): void {
  const stepper = stores.stepper.getState();
  if ((action === 'step' || action === 'continue' || action === 'stop') && !stepper.live) {
    // Say what to do instead of sending a request the server can only refuse in its own words.
    stepper.explain(
      stepper.branch === null
        ? 'No episode is open: start a task or a case from the library first.'
        : action === 'stop'
          ? 'This episode is not running: there is nothing to stop.'
          : selectHintBelowEnd(stepper),
    );
    return;
  }
  switch (action) {
    case 'step':
      void stepper.step();
      return;
    case 'continue':
      void stepper.run();
      return;
    case 'stop':
      void stepper.stop();
      return;
    case 'pause':
      void stepper.pause();
      return;
    case 'breakpoint': {
      // With nothing selected, F9 arms the next step, like a breakpoint on the next line.
      const step = stepper.selectedStep ?? selectLastStep(stepper) + 1;
      void stepper.toggleBreakpoint(Math.max(1, step));
      return;
    }
    case 'previous':
      stepper.selectPrevious();
      return;
    case 'next':
      stepper.selectNext();
      return;
    default:
      assertNever(action, 'debugger action');
  }
}

/**
 * Listens on `window` in the capture phase, so the keys work before any focused widget
 * (xterm, Monaco) sees them, and cancels their default (F5 would reload the page).
 */
export function installDebuggerKeys(stores: AppStores): () => void {
  const onKey = (e: KeyboardEvent): void => {
    const action = debuggerAction(e);
    // While the window asks whether to stop the live episode (or a file is being chosen), F5
    // must not run it behind the question (nor reload the page): the modal is answered first.
    if (modalOpen(stores)) {
      if (action && e.key.startsWith('F')) e.preventDefault();
      return;
    }
    if (!action || !actionApplies(stores, action)) return;
    e.preventDefault();
    e.stopPropagation();
    if (
      e.repeat &&
      (action === 'step' || action === 'continue' || action === 'stop' || action === 'breakpoint')
    )
      return;
    runDebuggerAction(stores, action);
  };
  window.addEventListener('keydown', onKey, { capture: true });
  return () => window.removeEventListener('keydown', onKey, { capture: true });
}
