/** Longest wait for an idle moment: a window that is never idle still gets the work done. */
const IDLE_TIMEOUT_MS = 1_000;

/**
 * Runs `work` once the window is idle (or after IDLE_TIMEOUT_MS): for work that may wait behind
 * what a person is looking at, such as loading xterm while the timeline's first screen is
 * painted (issue 19.10). Returns the cancel.
 */
export function whenIdle(work: () => void): () => void {
  if (typeof requestIdleCallback === 'function') {
    const id = requestIdleCallback(work, { timeout: IDLE_TIMEOUT_MS });
    return () => cancelIdleCallback(id);
  }
  const id = setTimeout(work, 0);
  return () => clearTimeout(id);
}
