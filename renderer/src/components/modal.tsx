import { useEffect, useRef, useState, type ReactNode } from 'react';

/** The focusable controls of a box, in Tab order (the trap cycles through them). */
function focusablesOf(box: HTMLElement | null): HTMLElement[] {
  return box
    ? Array.from(
        box.querySelectorAll<HTMLElement>(
          'button:not(:disabled), input:not(:disabled), select:not(:disabled), textarea:not(:disabled), [tabindex="0"]',
        ),
      )
    : [];
}

/**
 * A dialog of its own over a backdrop: nothing behind it takes a click while it is open (so it
 * never half-covers a control a person could still reach), Esc and a click outside close it, Tab
 * stays inside, and the focus goes back where it was. Used by Save as case… and the fork settings.
 */
export function Modal(props: {
  readonly title: string;
  readonly testId: string;
  readonly onClose: () => void;
  readonly children: ReactNode;
  readonly className?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { onClose } = props;
  // Nothing behind it takes the focus either: Tab traps inside it only while the focus is in it,
  // and a focus dropped to the page (a control that went away or went disabled, a completion
  // that re-rendered the field) let the next Tab reach the library behind. A focus that lands
  // outside every open dialog comes back to this one's first control (the class, not one way
  // out); a dialog opened over it (the file picker) is a dialog, and keeps it.
  // Declared first: its listener goes before the focus is given back on close (cleanups run in order).
  useEffect(() => {
    const onFocus = (e: FocusEvent): void => {
      const target = e.target instanceof Element ? e.target : null;
      if (!box.current || target?.closest('[aria-modal="true"]')) return;
      focusablesOf(box.current)[0]?.focus();
    };
    document.addEventListener('focusin', onFocus);
    return () => document.removeEventListener('focusin', onFocus);
  }, []);
  // Where the focus was, read as the dialog first renders: a field's autoFocus takes the focus in
  // the commit, before any effect, so the focus went back to that field, gone (the page: Open…,
  // Save as case… and Fork settings… each left a keyboard at the top of the window).
  const [before] = useState(() =>
    document.activeElement instanceof HTMLElement ? document.activeElement : null,
  );
  useEffect(() => {
    const first = box.current?.querySelector<HTMLElement>('[autofocus], input, select, textarea, button');
    first?.focus();
    return () => before?.focus();
  }, [before]);
  // Esc closes it wherever the focus is (a button that went disabled while busy drops it to the page).
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent): void => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      onClose();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [onClose]);
  return (
    <div className="sheet-backdrop" data-testid={`${props.testId}-backdrop`} onClick={onClose}>
      <div
        ref={box}
        className={`modal ${props.className ?? ''}`}
        role="dialog"
        aria-modal="true"
        aria-label={props.title}
        data-testid={props.testId}
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          // A field that used Tab itself (Open…'s completion) keeps the focus.
          if (e.key !== 'Tab' || e.defaultPrevented) return;
          const items = focusablesOf(box.current);
          if (items.length === 0) return;
          const i = items.indexOf(document.activeElement as HTMLElement);
          e.preventDefault();
          items[i < 0 ? 0 : (i + (e.shiftKey ? -1 : 1) + items.length) % items.length].focus();
        }}
      >
        <h2 className="modal-title">{props.title}</h2>
        {props.children}
      </div>
    </div>
  );
}
