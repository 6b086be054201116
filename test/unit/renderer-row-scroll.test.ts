import { describe, expect, it } from 'vitest';
import { fillSlots, NO_ROWS, rowsInView, scrollTopFor } from '../../renderer/src/model/row-scroll';

describe('scrollTopFor (the timeline brings the viewed row into view by arithmetic)', () => {
  const view = { offset: 22 * 100, height: 220 };
  it('leaves a fully visible row where it is', () => {
    expect(scrollTopFor(100, 10_000, 22, view, 'auto')).toBeNull();
    expect(scrollTopFor(109, 10_000, 22, view, 'auto')).toBeNull();
  });
  it('scrolls a row above the window to the top, one below it to the bottom', () => {
    expect(scrollTopFor(99, 10_000, 22, view, 'auto')).toBe(22 * 99);
    expect(scrollTopFor(110, 10_000, 22, view, 'auto')).toBe(22 * 111 - 220);
    expect(scrollTopFor(119, 10_000, 22, view, 'auto')).toBe(22 * 120 - 220);
    expect(scrollTopFor(90, 10_000, 22, view, 'auto')).toBe(22 * 90);
  });
  it('centres a row more than a window away, so its neighbours on both sides are on screen', () => {
    expect(scrollTopFor(8_000, 10_000, 22, view, 'auto')).toBe(22 * 7_995);
    expect(scrollTopFor(10, 10_000, 22, view, 'auto')).toBe(22 * 5);
    // Clamped to the list at its ends.
    expect(scrollTopFor(0, 10_000, 22, view, 'auto')).toBe(0);
    expect(scrollTopFor(9_999, 10_000, 22, view, 'auto')).toBe(22 * 10_000 - 220);
  });
  it('puts the followed row at the bottom, clamped to the list', () => {
    expect(scrollTopFor(9_999, 10_000, 22, view, 'end')).toBe(22 * 10_000 - 220);
    expect(scrollTopFor(3, 10_000, 22, { offset: 500, height: 220 }, 'end')).toBe(0);
    expect(scrollTopFor(20_000, 10_000, 22, view, 'end')).toBe(22 * 10_000 - 220);
  });
  it('a list shorter than its window never scrolls', () => {
    expect(scrollTopFor(4, 5, 22, { offset: 0, height: 220 }, 'end')).toBeNull();
    expect(scrollTopFor(0, 0, 22, { offset: 0, height: 220 }, 'auto')).toBeNull();
  });
});

describe('rowsInView (the timeline draws the rows its window shows, by arithmetic)', () => {
  const H = 22;
  it('draws the rows the window shows and two beyond each edge', () => {
    // 220 px at row 100: rows 100–109 shown, 98–111 drawn.
    expect(rowsInView(10_000, H, { offset: H * 100, height: 220 }, 2)).toEqual({ first: 98, last: 111 });
    // A row cut by an edge counts as shown: 5 px into row 100, 105–114 px of row 110.
    expect(rowsInView(10_000, H, { offset: H * 100 + 5, height: 220 }, 2)).toEqual({ first: 98, last: 112 });
    expect(rowsInView(10_000, H, { offset: H * 100, height: 220 }, 0)).toEqual({ first: 100, last: 109 });
  });
  it('clamps the overscan to the list at both ends', () => {
    expect(rowsInView(10_000, H, { offset: 0, height: 220 }, 2)).toEqual({ first: 0, last: 11 });
    expect(rowsInView(10_000, H, { offset: H, height: 220 }, 2)).toEqual({ first: 0, last: 12 });
    expect(rowsInView(10_000, H, { offset: H * 10_000 - 220, height: 220 }, 2)).toEqual({
      first: 9_988,
      last: 9_999,
    });
  });
  it('an offset past the end draws the last window (a list that just got shorter)', () => {
    expect(rowsInView(10_000, H, { offset: H * 20_000, height: 220 }, 2)).toEqual({
      first: 9_988,
      last: 9_999,
    });
    expect(rowsInView(100, H, { offset: H * 9_000, height: 220 }, 2)).toEqual({ first: 88, last: 99 });
    // And a negative one (an elastic overscroll) the first.
    expect(rowsInView(10_000, H, { offset: -50, height: 220 }, 2)).toEqual({ first: 0, last: 11 });
  });
  it('a list shorter than its window draws every row', () => {
    expect(rowsInView(5, H, { offset: 0, height: 220 }, 2)).toEqual({ first: 0, last: 4 });
    expect(rowsInView(5, H, { offset: 300, height: 220 }, 2)).toEqual({ first: 0, last: 4 });
    expect(rowsInView(1, H, { offset: 0, height: 220 }, 2)).toEqual({ first: 0, last: 0 });
  });
  it('draws nothing for an empty list or a window not laid out yet (no height)', () => {
    expect(rowsInView(0, H, { offset: 0, height: 220 }, 2)).toEqual(NO_ROWS);
    expect(rowsInView(10_000, H, { offset: H * 5_000, height: 0 }, 2)).toEqual(NO_ROWS);
    expect(NO_ROWS.last).toBeLessThan(NO_ROWS.first);
  });
  it('draws a window and its overscan at every offset, never more (a scrub through the list)', () => {
    for (let offset = 0; offset <= H * 1_000 - 500; offset += 7) {
      const { first, last } = rowsInView(1_000, H, { offset, height: 500 }, 2);
      const top = Math.floor(offset / H);
      const bottom = Math.ceil((offset + 500) / H) - 1;
      expect(first).toBe(Math.max(0, top - 2));
      expect(last).toBe(Math.min(999, bottom + 2));
      expect(last - first + 1).toBeLessThanOrEqual(Math.ceil(500 / H) + 1 + 4);
    }
  });
});

describe('fillSlots (a list keyed by slot draws every slot, so a move removes no row node)', () => {
  const H = 22;
  it('grows a window of whole rows by the row a window between rows draws', () => {
    const between = rowsInView(10_000, H, { offset: H * 100 + 5, height: 220 }, 2);
    const whole = rowsInView(10_000, H, { offset: H * 4_000, height: 220 }, 2);
    const slots = between.last - between.first + 1;
    expect(whole.last - whole.first + 1).toBe(slots - 1);
    const filled = fillSlots(whole, slots, 10_000);
    expect(filled).toEqual({ first: whole.first, last: whole.last + 1 });
    // Every slot drawn: index modulo the slot count is each slot once.
    const keys = new Set<number>();
    for (let i = filled.first; i <= filled.last; i++) keys.add(i % slots);
    expect(keys.size).toBe(slots);
  });
  it("grows before the first row at the list's end, and never past the list", () => {
    expect(fillSlots({ first: 9_990, last: 9_999 }, 14, 10_000)).toEqual({ first: 9_986, last: 9_999 });
    expect(fillSlots({ first: 0, last: 3 }, 14, 5)).toEqual({ first: 0, last: 4 });
  });
  it('leaves a range that fills its slots, and no range, as they are', () => {
    expect(fillSlots({ first: 10, last: 23 }, 14, 100)).toEqual({ first: 10, last: 23 });
    expect(fillSlots(NO_ROWS, 14, 100)).toEqual(NO_ROWS);
  });
});
