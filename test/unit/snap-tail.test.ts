import { describe, expect, it } from 'vitest';
import { snapTail } from '../../renderer/src/layout/snap-tail';

/** Replay's report under its pinned buttons: scrolled to its end, it rests on a whole line. */
describe('snapTail', () => {
  it('reaches the first line that starts past the end, a px over (the snap, not the end, decides)', () => {
    // Lines start at 0, 16 and 36 px of scroll; the content ends at 11: the line at 16 would sit
    // 5 px under the band at the end. 6 px more lets it rest at the band's edge.
    expect(snapTail([0, 16, 36], 11)).toBe(6);
    expect(snapTail([36, 0, 16], 11)).toBe(6);
  });

  it('adds nothing when the content fits or no line starts past the end; a px to a line at the end', () => {
    expect(snapTail([0, 16], 0)).toBe(0);
    expect(snapTail([0, 16], -20)).toBe(0);
    expect(snapTail([0, 16, 32], 16)).toBe(1);
    // No line starts past the end (the last is taller than the room): its end is read by scrolling.
    expect(snapTail([0, 4], 40)).toBe(0);
  });
});
