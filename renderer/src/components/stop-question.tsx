import { useEffect, useRef } from 'react';
import { useSlice, useStores } from '../stores/use-stores';

/** The dialog's buttons in Tab order (the trap cycles through them). */
function buttonsOf(box: HTMLElement | null): HTMLButtonElement[] {
  return box ? Array.from(box.querySelectorAll<HTMLButtonElement>('button:not(:disabled)')) : [];
}

/**
 * Asked before a start from the library stops the live episode the window shows: what runs
 * now, what would start, Stop or Cancel. Cancel (the focused answer, Escape, a click
 * outside) keeps the episode running; Tab stays inside the question until it is answered.
 */
export function StopQuestionDialog() {
  const stores = useStores();
  const question = useSlice('episodes', (s) => s.stopQuestion);
  const box = useRef<HTMLDivElement>(null);
  const open = question !== null;
  // Focus goes to Cancel (the answer that loses nothing) and back where it was when answered.
  useEffect(() => {
    if (!open) return;
    const before = document.activeElement as HTMLElement | null;
    box.current?.querySelector<HTMLButtonElement>('[data-testid="stop-question-cancel"]')?.focus();
    return () => before?.focus();
  }, [open]);
  if (!question) return null;
  const a = stores.episodes.getState();
  const { left, next } = question;
  const at = left.steps > 0 ? ` (at step ${left.steps})` : '';
  return (
    <div className="sheet-backdrop" onClick={() => a.answerStop(false)}>
      <div
        ref={box}
        className="stop-question"
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="stop-question-title"
        aria-describedby="stop-question-text"
        data-testid="stop-question"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            e.stopPropagation();
            a.answerStop(false);
            return;
          }
          if (e.key !== 'Tab') return;
          const buttons = buttonsOf(box.current);
          if (buttons.length === 0) return;
          const i = buttons.indexOf(document.activeElement as HTMLButtonElement);
          const to = (i + (e.shiftKey ? -1 : 1) + buttons.length) % buttons.length;
          e.preventDefault();
          buttons[i < 0 ? 0 : to].focus();
        }}
      >
        <h2 id="stop-question-title">Stop the live episode?</h2>
        <p id="stop-question-text">
          <span className="mono">{left.task}</span> is live{at}. Starting{' '}
          <b data-testid="stop-question-next">{next}</b> stops it and gives its sandbox back; its trace stays
          in the library, and Reopen (under Replay) goes on from any step.
        </p>
        <div className="row">
          <button type="button" data-testid="stop-question-cancel" onClick={() => a.answerStop(false)}>
            Cancel — keep it running
          </button>
          <button
            type="button"
            className="stop"
            data-testid="stop-question-stop"
            onClick={() => a.answerStop(true)}
          >
            Stop it and start
          </button>
        </div>
        <p className="muted">Esc cancels.</p>
      </div>
    </div>
  );
}
