import { describe, expect, it } from 'vitest';
import { frozenWhy, type PaintFacts } from '../support/paint-facts';

// How the e2e screenshot helper judges a window whose capture did not come (test/support/e2e.ts):
// the main thread answering was taken as "not frozen", though a window that answers may still
// paint nothing or lay itself out without end.
const idle: PaintFacts = { frames: 58, layouts: 0, styles: 2, taskMs: 40, scriptMs: 5, wallMs: 1010 };

describe('frozenWhy: a window whose screenshot did not come', () => {
  it('that paints and idles is not frozen (Chromium left the capture)', () => {
    expect(frozenWhy(idle)).toBeNull();
    // A clock or a blinking cursor lays out now and then.
    expect(frozenWhy({ ...idle, layouts: 3, frames: 12 })).toBeNull();
  });
  it('that answers but paints no frame is frozen', () => {
    expect(frozenWhy({ ...idle, frames: 0 })).toMatch(
      /^the window painted no frame in a second: it is frozen \(0 frames,/,
    );
  });
  it('whose main thread does not answer is frozen', () => {
    expect(frozenWhy({ ...idle, frames: null, wallMs: 5003 })).toMatch(
      /^the window's main thread did not answer in 5 s: it is frozen \(no answer in 5 s,/,
    );
  });
  it('whose main thread is busy the whole second is frozen, though it paints', () => {
    expect(frozenWhy({ ...idle, frames: 4, taskMs: 980, scriptMs: 900 })).toMatch(
      /^the window's main thread was busy the whole second: it is frozen .*busy 980 ms \(scripts 900 ms\) of 1010 ms\)$/,
    );
  });
  it('that lays itself out every frame is a layout loop (two sizes alternating)', () => {
    expect(frozenWhy({ ...idle, layouts: 60, styles: 60, taskMs: 400 })).toBe(
      'the window laid itself out 60 times in a second with nothing asked of it: a layout loop (58 frames, 60 layouts, 60 style recalcs, main thread busy 400 ms (scripts 5 ms) of 1010 ms)',
    );
  });
});
