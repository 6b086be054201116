import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterFrame } from '../../renderer/src/model/after-frame';

// The detail of a step the slider jumped to is asked for behind the paint of the frame that
// shows it selected (issue 33.9); a hidden window paints no frame and must still ask.
describe('afterFrame', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('runs the work once, in a task behind the frame, not at the fallback again', async () => {
    const frames: (() => void)[] = [];
    vi.stubGlobal('requestAnimationFrame', (f: () => void) => frames.push(f));
    const work = vi.fn();
    afterFrame(work);
    expect(work).not.toHaveBeenCalled();
    expect(frames).toHaveLength(1);
    frames[0]();
    // Not inside the frame's callback: in a task of its own.
    expect(work).not.toHaveBeenCalled();
    await vi.waitFor(() => expect(work).toHaveBeenCalledTimes(1));
    await new Promise((r) => setTimeout(r, 150));
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('runs the work after 100 ms when no frame comes (a hidden window), and once', () => {
    vi.useFakeTimers();
    vi.stubGlobal('requestAnimationFrame', () => 0);
    const work = vi.fn();
    afterFrame(work);
    vi.advanceTimersByTime(99);
    expect(work).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(work).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1000);
    expect(work).toHaveBeenCalledTimes(1);
  });
});
