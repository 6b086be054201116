import { useEffect, useRef } from 'react';
import { CandidatesView } from './candidates-view';
import { CompareView } from './compare-view';
import type { SideBySideTab } from '../stores/side-by-side/side-by-side-store';
import { selectLastStep, selectViewedStep } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';

const TABS: readonly (readonly [SideBySideTab, string])[] = [
  ['candidates', 'Candidates'],
  ['compare', 'Compare'],
];

/**
 * Candidates and compare in a view of their own: over the timeline, inspector and the
 * panes under them (the library and the stepper bar stay), so each candidate's action,
 * result, files and reward read whole, wrapped, with its Pick at hand. Escape or Close
 * gives the panes back; the seven panels stay mounted beneath.
 */
export function SideBySideView(props: {
  /** Where the library column (and its splitter) ends, px. */ readonly left: number;
}) {
  const stores = useStores();
  const view = useSlice('sideBySide', (s) => s.view);
  const branch = useSlice('stepper', (s) => s.branch);
  // The step only while the view is open: closed, a click or slider move does not render it.
  const last = useSlice('stepper', (s) => (view !== null ? selectLastStep(s) : 0));
  const viewed = useSlice('stepper', (s) => (view !== null ? selectViewedStep(s) : null));
  const ref = useRef<HTMLElement>(null);
  const open = view !== null && branch !== null;
  // Opened, focus moves in (a keyboard user is where the view is); Escape closes it.
  useEffect(() => {
    if (!open) return;
    ref.current?.focus();
    // Escape closes the view wherever focus is (a clicked button may have been disabled and
    // dropped it), except where Escape belongs to what has focus: the terminal, an editor.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      const target = e.target instanceof Element ? e.target : null;
      if (target?.closest('.xterm, .monaco-editor, [role="dialog"]:not(.side-by-side)')) return;
      stores.sideBySide.getState().close();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open, stores]);
  if (!open) return null;
  const step = viewed ?? last;
  const close = () => stores.sideBySide.getState().close();
  return (
    <section
      ref={ref}
      className="side-by-side"
      data-testid="side-by-side"
      data-view={view}
      role="dialog"
      aria-label={view === 'candidates' ? 'candidates side by side' : 'compare branches'}
      tabIndex={-1}
      style={{ left: props.left }}
    >
      <header className="panel-head sbs-head">
        <nav className="tabs" role="tablist" aria-label="side by side">
          {TABS.map(([id, label]) => (
            <button
              key={id}
              type="button"
              role="tab"
              aria-selected={view === id}
              className={view === id ? 'on' : ''}
              data-testid="side-by-side-tab"
              data-tab={id}
              onClick={() => stores.sideBySide.getState().show(id)}
            >
              {label}
            </button>
          ))}
        </nav>
        <span className="muted mono sbs-branch" title={branch}>
          {branch}
        </span>
        <button
          type="button"
          data-testid="side-by-side-close"
          aria-keyshortcuts="Escape"
          title="back to the timeline and inspector (Escape); candidates held stay held"
          onClick={close}
        >
          Close <kbd>Esc</kbd>
        </button>
      </header>
      <div className="sbs-body" data-testid="side-by-side-body">
        {view === 'candidates' ? (
          <CandidatesView branch={branch} step={step} />
        ) : (
          <CompareView branch={branch} />
        )}
      </div>
    </section>
  );
}
