/** Longest wait for a frame: a hidden window paints none, and what waits must still run. */
const FRAME_TIMEOUT_MS = 100;

/**
 * Runs `work` in a task right behind the paint of the next frame (or after FRAME_TIMEOUT_MS
 * when no frame comes: a hidden window): for work a person waits for, but not before what the
 * current update shows, such as asking the server for a step's detail once the timeline shows
 * the step selected (issue 33.9). Unlike `whenIdle`, it never waits for an idle moment.
 */
export function afterFrame(work: () => void): void {
  let done = false;
  const run = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    work();
  };
  const timer = setTimeout(run, FRAME_TIMEOUT_MS);
  if (typeof requestAnimationFrame !== 'function') return;
  // A task of its own, behind the frame's paint (the frame's callbacks run before it paints).
  requestAnimationFrame(() => setTimeout(run, 0));
}
