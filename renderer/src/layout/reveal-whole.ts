/**
 * What a person acts on, and a line that stands where one will be (`data-keep-whole`: the
 * "What if…" line while its step's call loads): a sliver of one at a pane's edge reads as a
 * broken layout. The stand-in counts because the pane is judged once, when its answer comes:
 * judged as plain text, the line was left cut at the edge, and the control that replaced it a
 * moment later was shown sliced (after a rollback at 1024×700).
 */
export const KEEP_WHOLE =
  'button, input, select, textarea, summary, a[href], [role="button"], [data-keep-whole]';

/** The nearest ancestor that scrolls vertically, or null. */
function scrollerOf(el: HTMLElement): HTMLElement | null {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const y = getComputedStyle(p).overflowY;
    if ((y === 'auto' || y === 'scroll') && p.scrollHeight > p.clientHeight) return p;
  }
  return null;
}

/**
 * What a pane may pin at its top or bottom while the rest scrolls under it (`data-pinned`: Replay's
 * buttons, which scrolled out of view once "What if…" or a report was open at 1024×700; a card's
 * action row). Pinned while its style makes it sticky (styles.css says when).
 */
export const PINNED = '[data-pinned]';

/** True when `el` is pinned now (sticky by its style). */
function pinnedNow(el: Element): boolean {
  return getComputedStyle(el).position === 'sticky';
}

/**
 * The scroller's visible band (viewport px), inside its borders, below a row pinned at its top and
 * above one pinned at its bottom (a card's action row, styles.css `.pinned-actions`).
 */
function band(scroller: HTMLElement): { top: number; bottom: number } {
  const edge = scroller.getBoundingClientRect().top + scroller.clientTop;
  const end = edge + scroller.clientHeight;
  // A sticky row sticks inside the scroller's padding: the held step's Save and run sat 6 px above
  // the Inspector's bottom edge, was not taken for pinned, and the editor was left under it.
  const style = getComputedStyle(scroller);
  const padTop = parseFloat(style.paddingTop) || 0;
  const padBottom = parseFloat(style.paddingBottom) || 0;
  let top = edge;
  let bottom = end;
  for (const pin of Array.from(scroller.querySelectorAll(PINNED))) {
    const r = pin.getBoundingClientRect();
    if (!pinnedNow(pin) || r.height === 0) continue;
    // Stuck at an edge (not where it sits before the pane scrolls, below a question).
    if (r.top <= edge + padTop + 0.5) top = Math.max(top, r.bottom);
    else if (r.bottom >= end - padBottom - 0.5) bottom = Math.min(bottom, r.top);
  }
  return { top, bottom };
}

/** Where things stand at this scroll: the target whole or not, and the controls cut by each edge. */
interface Fit {
  readonly whole: boolean;
  readonly top: readonly DOMRect[];
  readonly bottom: readonly DOMRect[];
}

function fitAt(scroller: HTMLElement, target: HTMLElement): Fit {
  const { top, bottom } = band(scroller);
  const t = target.getBoundingClientRect();
  const cutTop: DOMRect[] = [];
  const cutBottom: DOMRect[] = [];
  for (const el of Array.from(scroller.querySelectorAll(KEEP_WHOLE))) {
    // Not one inside a closed section: its box is laid out (Chromium keeps a closed <details>'
    // content laid out, unpainted), so "What if…"'s hidden field counted as cut below the edge.
    const pin = el.closest(PINNED);
    if (!el.checkVisibility() || (pin && pinnedNow(pin))) continue;
    const r = el.getBoundingClientRect();
    if (r.height === 0) continue;
    if (r.top < top - 0.5 && r.bottom > top + 0.5) cutTop.push(r);
    if (r.top < bottom - 0.5 && r.bottom > bottom + 0.5) cutBottom.push(r);
  }
  return { whole: t.top >= top - 0.5 && t.bottom <= bottom + 0.5, top: cutTop, bottom: cutBottom };
}

/**
 * Scrolls `target` (an answer under a pane's buttons) into view whole, with no control shown
 * as a sliver at the pane's edges: at 1024×700 a three-line error under Replay's buttons left
 * a thin strip of the first row of buttons above it, and a notice a strip of "What if…" below.
 * A control cut by an edge is brought in whole where the target still fits, else scrolled out
 * whole; failing both, the target goes to the top. Only where none of these is clean does a
 * strip stay, below rather than above (it reads as "more below"); the target is always whole.
 */
export function revealWhole(target: HTMLElement, from?: HTMLElement | null): void {
  revealTarget(target);
  // What the target answers (a manual agent's guidance above its Send): as much of its beginning
  // as the band holds with the target still whole. At 1024×700 Send was brought in and the
  // guidance above it left showing only "Escape)."
  const scroller = from ? scrollerOf(target) : null;
  if (!from || !scroller) return;
  const { top, bottom } = band(scroller);
  const above = top - from.getBoundingClientRect().top;
  const room = bottom - target.getBoundingClientRect().bottom;
  if (above > 0.5) scroller.scrollTop -= Math.max(0, Math.min(above, room));
}

function revealTarget(target: HTMLElement): void {
  target.scrollIntoView({ block: 'nearest' });
  const scroller = scrollerOf(target);
  if (!scroller) return;
  // Brought to the top edge, it sits under a pinned row: below it. Brought to the bottom edge,
  // under a row pinned there (a card's actions): above it.
  const under = band(scroller).top - target.getBoundingClientRect().top;
  if (under > 0.5) scroller.scrollTop -= under;
  const over = target.getBoundingClientRect().bottom - band(scroller).bottom;
  if (under <= 0.5 && over > 0.5) scroller.scrollTop += over;
  const nearest = scroller.scrollTop;
  const first = fitAt(scroller, target);
  if (!first.whole || first.top.length + first.bottom.length === 0) return;
  const { top, bottom } = band(scroller);
  const tries: number[] = [];
  if (first.top.length) {
    tries.push(nearest - (top - Math.min(...first.top.map((r) => r.top))));
    tries.push(nearest + (Math.max(...first.top.map((r) => r.bottom)) - top));
  }
  if (first.bottom.length) {
    tries.push(nearest + (Math.max(...first.bottom.map((r) => r.bottom)) - bottom));
    tries.push(nearest - (bottom - Math.min(...first.bottom.map((r) => r.top))));
  }
  tries.push(nearest + (target.getBoundingClientRect().top - top));
  let fallback = first.top.length ? null : nearest;
  for (const at of tries) {
    scroller.scrollTop = at;
    // A scroll the content cannot take (the pane's end) lands elsewhere: look at where it is.
    const fit = fitAt(scroller, target);
    if (!fit.whole || fit.top.length > 0) continue;
    if (fit.bottom.length === 0) return;
    fallback ??= scroller.scrollTop;
  }
  scroller.scrollTop = fallback ?? nearest;
}
