/**
 * Time as the services read it: injected, so what depends on minutes passing (idle release,
 * the grace after the last window closed) is tested by moving a fake clock, never by sleeping.
 */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  /** Runs `fn` after `ms`; returns the cancel. A pending timer never keeps the process alive. */
  after(ms: number, fn: () => void): () => void;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
