import { useEffect, useRef } from 'react';
import { KEY_SHEET } from '../hooks/action-keys';

/** The keyboard sheet: every key of the window, opened with "?" or the bar's Keys button. */
export function KeySheet(props: { readonly onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  // Focus goes into the sheet (a screen reader reads it) and back where it was when it closes.
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    box.current?.focus();
    return () => before?.focus();
  }, []);
  return (
    <div className="sheet-backdrop" onClick={props.onClose}>
      <div
        ref={box}
        className="key-sheet"
        role="dialog"
        aria-modal="true"
        aria-label="keyboard keys"
        data-testid="key-sheet"
        tabIndex={-1}
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === 'Escape' || e.key === '?') {
            e.preventDefault();
            e.stopPropagation();
            props.onClose();
          }
        }}
      >
        <header>
          <h2>Keys</h2>
          <button type="button" onClick={props.onClose} aria-label="close the keyboard sheet">
            ✕
          </button>
        </header>
        <div className="key-sheet-body">
          {KEY_SHEET.map((section) => (
            <section key={section.title}>
              <h3>{section.title}</h3>
              <dl>
                {section.lines.map((line) => (
                  <div key={line.keys.join('+')} className="key-line" data-testid="key-line">
                    <dt>
                      {line.keys.map((k, i) => (
                        <span key={k}>
                          {i > 0 ? (line.keys[0] === '←' ? ' ' : '+') : null}
                          <kbd>{k}</kbd>
                        </span>
                      ))}
                    </dt>
                    <dd>{line.does}</dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
        </div>
        <p className="muted">Esc or ? closes this sheet.</p>
      </div>
    </div>
  );
}
