/** Where a fixed-height list is scrolled and how tall its window is. */
export interface ScrollView {
  /** The current scrollTop. */
  readonly offset: number;
  /** The visible height of the scrolling element. */
  readonly height: number;
}

/**
 * The scrollTop that brings row `index` of `count` rows of `rowHeight` px into view, or
 * null when it is already fully visible (`auto`); `end` puts it at the bottom (following a
 * live run). `auto` scrolls a row just beyond an edge (↑/↓, the next step) the least that
 * shows it, and centres a far one (a slider move, "go to step"): placed at the edge, its
 * neighbours on one side were off screen, and a click on one of them scrolled the list
 * again, a layout and a repaint of every row inside the click's frame (issue 33.9). Arithmetic only: asking the element (scrollHeight, getBoundingClientRect) on
 * every slider move forced a layout of the window per move, and the virtualizer's own
 * scrollToIndex re-read it for several frames (≈1 s of a 2.6 s scrub profile, issue 19.10).
 */
export function scrollTopFor(
  index: number,
  count: number,
  rowHeight: number,
  view: ScrollView,
  align: 'auto' | 'end',
): number | null {
  if (count <= 0 || index < 0) return null;
  const i = Math.min(index, count - 1);
  const top = i * rowHeight;
  const bottom = top + rowHeight;
  const max = Math.max(0, count * rowHeight - view.height);
  let target: number;
  if (align === 'end') target = bottom - view.height;
  else if (top >= view.offset && bottom <= view.offset + view.height) return null;
  else if (top < view.offset - view.height || bottom > view.offset + 2 * view.height)
    // Centred on a row's edge, so a window of whole rows (styles.css .tl-scroll) shows them whole.
    target = Math.floor((top + rowHeight / 2 - view.height / 2) / rowHeight) * rowHeight;
  else if (top < view.offset) target = top;
  else target = bottom - view.height;
  const clamped = Math.max(0, Math.min(max, Math.round(target)));
  return clamped === Math.round(view.offset) ? null : clamped;
}

/** The rows of a fixed-height list to draw: `first` to `last`, both included; none when `last < first`. */
export interface RowRange {
  readonly first: number;
  readonly last: number;
}

/** No row drawn. */
export const NO_ROWS: RowRange = { first: 0, last: -1 };

/**
 * The rows of `count` rows of `rowHeight` px that a window of `view.height` px at `view.offset`
 * shows, and `overscan` more beyond each edge (clamped to the list). Arithmetic, O(1): the
 * virtualizer it replaces built an object per row (10,000 on a long trace) and searched them,
 * ~55 ms of the first open's CPU (issue 33.9). Its rules are kept: a window of no height (not
 * laid out yet) or an empty list draws nothing, and an offset beyond the end (a list that just
 * got shorter, the element not yet clamped) draws the last window's rows.
 */
export function rowsInView(count: number, rowHeight: number, view: ScrollView, overscan: number): RowRange {
  if (count <= 0 || view.height <= 0 || rowHeight <= 0) return NO_ROWS;
  const end = Math.max(0, count * rowHeight - view.height);
  const offset = Math.max(0, Math.min(view.offset, end));
  const top = Math.min(count - 1, Math.floor(offset / rowHeight));
  // The last row whose top is above the window's bottom edge.
  const bottom = Math.max(top, Math.min(count - 1, Math.ceil((offset + view.height) / rowHeight) - 1));
  return { first: Math.max(0, top - overscan), last: Math.min(count - 1, bottom + overscan) };
}

/**
 * `range` grown to `slots` rows (or every row, when there are fewer): rows after its end first,
 * then before its start. A list keyed by slot (timeline.tsx) that draws every slot never
 * removes a row node nor creates one as it moves; a window of whole rows draws one row fewer
 * than a window between rows, and the slot it left empty was a row node removed on one move
 * and created on the next (the focused row among them: its removal forced a style and layout
 * of the list in the move's task, issue 33.9).
 */
export function fillSlots(range: RowRange, slots: number, count: number): RowRange {
  if (range.last < range.first) return range;
  const want = Math.min(slots, count);
  const drawn = range.last - range.first + 1;
  if (drawn >= want) return range;
  const last = Math.min(count - 1, range.first + want - 1);
  return { first: Math.max(0, last - want + 1), last };
}
