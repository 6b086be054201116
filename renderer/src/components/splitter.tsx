import { useEffect, useRef, type KeyboardEvent, type PointerEvent, type RefObject } from 'react';

/**
 * A drag handle between two panes. `axis: 'x'` sits between columns (drag left/right),
 * `'y'` between rows. `sign` says which way grows the pane it sizes: +1 when dragging
 * right/down makes it bigger, -1 when it makes it smaller (a pane right of or below the
 * handle). Arrow keys move it too, so the layout can be shaped without a mouse. `pane`: the
 * pane it sizes, when that may be drawn at another size than `value` (fitted to its content):
 * a drag or a key then starts from the size on screen, not with a jump to `value`.
 */
export function Splitter(props: {
  readonly axis: 'x' | 'y';
  readonly value: number;
  readonly sign: 1 | -1;
  readonly label: string;
  readonly testId: string;
  readonly onChange: (size: number) => void;
  /** Called when a drag or key press is done: the moment to remember the layout. */
  readonly onCommit: () => void;
  readonly pane?: RefObject<HTMLElement | null>;
}) {
  const drag = useRef<{ start: number; size: number } | null>(null);
  const handle = useRef<HTMLDivElement>(null);
  // A pane drawn at another size than `value` (fitted to its content) is announced at the size on
  // screen: assistive technology read 350 for a pane drawn 190 px tall. Kept by a ResizeObserver,
  // written on the handle (a render per resize of the pane would be for one attribute).
  const pane = props.pane;
  const axis = props.axis;
  useEffect(() => {
    const el = pane?.current;
    const h = handle.current;
    if (!el || !h || typeof ResizeObserver === 'undefined') return;
    const say = () => {
      const box = el.getBoundingClientRect();
      h.setAttribute('aria-valuenow', String(Math.round(axis === 'x' ? box.width : box.height)));
    };
    const observer = new ResizeObserver(say);
    observer.observe(el);
    return () => observer.disconnect();
  }, [pane, axis]);
  const coord = (e: PointerEvent) => (props.axis === 'x' ? e.clientX : e.clientY);
  const drawn = (): number => {
    const box = props.pane?.current?.getBoundingClientRect();
    return box ? Math.round(props.axis === 'x' ? box.width : box.height) : props.value;
  };
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    drag.current = { start: coord(e), size: drawn() };
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    const d = drag.current;
    if (d) props.onChange(d.size + props.sign * (coord(e) - d.start));
  };
  const onPointerUp = (e: PointerEvent<HTMLDivElement>) => {
    if (!drag.current) return;
    drag.current = null;
    e.currentTarget.releasePointerCapture(e.pointerId);
    props.onCommit();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const [less, more] = props.axis === 'x' ? ['ArrowLeft', 'ArrowRight'] : ['ArrowUp', 'ArrowDown'];
    const step = e.shiftKey ? 64 : 16;
    if (e.key !== less && e.key !== more) return;
    // The window listens for ←/→ to scrub; on a focused handle they move the handle instead.
    e.preventDefault();
    e.stopPropagation();
    props.onChange(drawn() + props.sign * (e.key === more ? step : -step));
    props.onCommit();
  };
  return (
    <div
      className={`splitter splitter-${props.axis}`}
      role="separator"
      aria-orientation={props.axis === 'x' ? 'vertical' : 'horizontal'}
      aria-label={props.label}
      // With a pane, the size on screen (the effect above); else the size chosen.
      aria-valuenow={props.pane ? undefined : Math.round(props.value)}
      ref={handle}
      tabIndex={0}
      data-testid={props.testId}
      title={`${props.label}: drag, or focus and use the arrow keys`}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={onPointerUp}
      onPointerCancel={onPointerUp}
      onKeyDown={onKeyDown}
    />
  );
}
