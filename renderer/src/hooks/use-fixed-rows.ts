import { useLayoutEffect, useReducer, useRef, useState, type RefObject } from 'react';
import { flushSync } from 'react-dom';
import { NO_ROWS, rowsInView, type RowRange, type ScrollView } from '../model/row-scroll';

/** What the list of fixed-height rows draws, and where it is. */
export interface FixedRows {
  /** The rows to draw (see rowsInView). */
  readonly range: RowRange;
  /** The list's whole height, px. */
  readonly totalHeight: number;
  /**
   * Where the list is: the offset last scrolled to or told, and the window's height as last
   * measured (0 until the element is laid out). Read without asking the element (no layout).
   */
  view(): ScrollView;
  /**
   * Says the list is going to `offset` (a scrollTop we are about to write), as its scroll event
   * would a frame later: the rows there are drawn in the render this asks for (wrapped in
   * flushSync by the caller, in this task).
   */
  tell(offset: number): void;
}

/** What useFixedRows draws from. */
export interface FixedRowsOptions {
  /** Off while no list is drawn: its place is then forgotten, and the next list drawn starts at `initialOffset`. */
  readonly enabled: boolean;
  readonly count: number;
  readonly rowHeight: number;
  /** Rows drawn beyond each edge of the window. */
  readonly overscan: number;
  /** The scrolling element (it may come and go with the list). */
  readonly scrollRef: RefObject<HTMLElement | null>;
  /** The offset a list just drawn opens at, before its element exists. */
  readonly initialOffset: () => number;
}

/** The list's place, kept across renders; none of it is React state (see `rendered`). */
interface Place {
  element: HTMLElement | null;
  /** null until a list is drawn (then `initialOffset`), again once it is gone. */
  offset: number | null;
  height: number;
  stop: (() => void) | null;
  /** The count and the range the last render drew: a move that keeps the range renders nothing. */
  count: number;
  rendered: RowRange;
}

/**
 * The rows a scrolling list of one fixed row height draws: which ones, from the element's
 * offset and height, by arithmetic; no object per row. The component renders again only when
 * the range changes (a scroll of a few px draws nothing new). The element's height is read
 * once when it appears (one forced layout, in the commit that drew it) and then from a
 * ResizeObserver; its offset from its scroll events and from `tell`.
 */
export function useFixedRows(options: FixedRowsOptions): FixedRows {
  const { enabled, count, rowHeight, overscan } = options;
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  // The options a listener reads: the latest render's.
  const latest = useRef({ rowHeight, overscan });
  latest.current = { rowHeight, overscan };
  // Made once: `view` and `tell` keep their identity, so effects that use them run when the
  // list moves, not on every render.
  const [place] = useState<Place>(() => ({
    element: null,
    offset: null,
    height: 0,
    stop: null,
    count: 0,
    rendered: NO_ROWS,
  }));
  const [handle] = useState(() => {
    const view = (): ScrollView => ({ offset: place.offset ?? 0, height: place.height });
    /** Renders again when the place moved the range drawn; `sync` draws it in this task. */
    const changed = (sync: boolean) => {
      const { rowHeight: h, overscan: o } = latest.current;
      const next = rowsInView(place.count, h, view(), o);
      if (next.first === place.rendered.first && next.last === place.rendered.last) return;
      if (sync) flushSync(rerender);
      else rerender();
    };
    const tell = (offset: number) => {
      place.offset = offset;
      changed(false);
    };
    return { view, changed, tell };
  });
  const { view, changed } = handle;
  // A list about to be drawn opens where it is asked to (its element does not exist yet).
  if (enabled && place.offset === null) place.offset = options.initialOffset();
  const range = enabled ? rowsInView(count, rowHeight, view(), overscan) : NO_ROWS;
  place.count = enabled ? count : 0;
  place.rendered = range;

  // Follows the element, as the list is drawn and taken away (after every commit, before the
  // component's own layout effects: they read `view()`).
  const scrollRef = options.scrollRef;
  useLayoutEffect(() => {
    const el = enabled ? scrollRef.current : null;
    if (el === place.element) return;
    place.stop?.();
    place.stop = null;
    place.element = el;
    if (!el) {
      place.offset = null;
      place.height = 0;
      return;
    }
    // The window's first layout, forced once: its rows are drawn before the first paint.
    place.height = el.clientHeight;
    // A person's scroll draws its rows in the scroll event's task (as the virtualizer did).
    const onScroll = () => {
      place.offset = el.scrollTop;
      changed(true);
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    const observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver(() => {
            place.height = el.clientHeight;
            changed(false);
          });
    observer?.observe(el);
    place.stop = () => {
      el.removeEventListener('scroll', onScroll);
      observer?.disconnect();
    };
    changed(false);
  });
  // Unmounted: no listener left on a detached element.
  useLayoutEffect(
    () => () => {
      place.stop?.();
      place.stop = null;
      place.element = null;
      place.offset = null;
      place.height = 0;
    },
    [place],
  );

  return {
    range,
    totalHeight: enabled ? count * rowHeight : 0,
    view,
    tell: handle.tell,
  };
}
