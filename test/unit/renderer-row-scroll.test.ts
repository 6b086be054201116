import { describe, expect, it } from 'vitest';
import { scrollTopFor } from '../../renderer/src/model/row-scroll';

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
    expect(scrollTopFor(8_000, 10_000, 22, view, 'auto')).toBe(22 * 8_000 + 11 - 110);
    expect(scrollTopFor(10, 10_000, 22, view, 'auto')).toBe(22 * 10 + 11 - 110);
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
