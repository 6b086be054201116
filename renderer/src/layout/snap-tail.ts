/**
 * The space to leave after a scrolled list read under a pinned band, so that scrolled to its end
 * it rests with a whole line at the band's edge, as everywhere else (its lines are snap points):
 * without it the end was where the content ran out, and the line at the band's edge sat a few
 * px under it (Replay's report at 1024×700, `journey-replay-verdicts`).
 *
 * `starts`: the scroll offsets at which each line's top meets the band's edge; `end`: the largest
 * scroll offset without the tail. The tail reaches the first line that would start past the end
 * (0 when the content fits, or when no line starts past it).
 */
export function snapTail(starts: readonly number[], end: number): number {
  if (end <= 0) return 0;
  const next = starts.filter((s) => s >= end - 0.5).sort((a, b) => a - b)[0];
  // A px over: the heights are fractional and the scroll range whole px; the snap, not the end,
  // then decides where it rests.
  return next === undefined ? 0 : Math.ceil(next - end) + 1;
}

/** The lines of a pinned pane that a scroll rests on (styles.css gives them `scroll-snap-align`). */
export const SNAP_LINES = '.report, .report > *, .report .replay-steps > li, :scope > .whatif';

/** Where a band pinned at the top of `body` (sticky) ends, from the top of its view. */
export function pinnedBottom(body: HTMLElement, band: HTMLElement): number {
  return band.getBoundingClientRect().bottom - body.getBoundingClientRect().top - body.clientTop;
}

/**
 * Sets `--pinned-tail` on `body` (the scrolling pane under `band`): the {@link snapTail} of its
 * lines, measured as laid out now (the tail it already has taken off).
 */
export function setSnapTail(body: HTMLElement, band: HTMLElement): void {
  const had = parseFloat(body.style.getPropertyValue('--pinned-tail')) || 0;
  const end = body.scrollHeight - had - body.clientHeight;
  const top = body.getBoundingClientRect().top + body.clientTop - body.scrollTop;
  const lines = Array.from(body.querySelectorAll<HTMLElement>(SNAP_LINES));
  const starts = lines.map((el) => el.getBoundingClientRect().top - top - pinnedBottom(body, band));
  const tail = snapTail(starts, end);
  body.style.setProperty('--pinned-tail', `${tail}px`);
  // Lines that start past the new end are no rest of their own: a browser takes such a snap
  // point as the end itself, which cuts the line above by the tail's spare px.
  const last = end + tail;
  lines.forEach((el, i) => {
    if (starts[i] > last - 1.5) el.dataset.snap = 'no';
    else delete el.dataset.snap;
  });
}
