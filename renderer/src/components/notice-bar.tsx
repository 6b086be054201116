import { useLayoutEffect, useRef } from 'react';
import { useSlice, useStores } from '../stores/use-stores';
import { PeopleText } from './people-text';

/**
 * The window's one notification area: a bar of its own at the foot of the window (a grid row,
 * so it pushes the panes up instead of lying over them), one line per message, each with ×.
 * Messages about an episode go when another is opened (see the notices slice).
 */
export function NoticeBar() {
  const stores = useStores();
  const items = useSlice('notices', (s) => s.items);
  const bar = useRef<HTMLDivElement>(null);
  // The views laid over the panes (candidates, compare) stop above the bar: its height, written
  // on the window for their `bottom`.
  useLayoutEffect(() => {
    const el = bar.current;
    const app = el?.closest<HTMLElement>('.app') ?? document.querySelector<HTMLElement>('.app');
    if (!app) return;
    if (!el) {
      app.style.removeProperty('--notice-h');
      return;
    }
    const write = (): void => app.style.setProperty('--notice-h', `${el.offsetHeight}px`);
    write();
    const watch = new ResizeObserver(write);
    watch.observe(el);
    return () => {
      watch.disconnect();
      app.style.removeProperty('--notice-h');
    };
  }, [items.length]);
  if (items.length === 0) return null;
  return (
    <div
      ref={bar}
      className="notice-bar"
      data-testid="notice-bar"
      role="log"
      aria-live="polite"
      aria-label="messages"
    >
      {items.map((n) => (
        <div
          key={n.id}
          className={`nb-line nb-${n.tone}`}
          data-testid="notice"
          data-kind={n.kind}
          data-tone={n.tone}
          role={n.tone === 'error' ? 'alert' : 'status'}
        >
          <PeopleText className="notice-text" text={n.text} />
          {n.action ? (
            <button
              type="button"
              className="notice-action"
              data-testid="notice-action"
              onClick={() => {
                stores.notices.getState().dismiss(n.id);
                n.action?.run();
              }}
            >
              {n.action.label}
            </button>
          ) : null}
          <button
            type="button"
            className="notice-close"
            data-testid="notice-dismiss"
            aria-label={`dismiss: ${n.text}`}
            title="Dismiss this message"
            onClick={() => stores.notices.getState().dismiss(n.id)}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
