/**
 * Installed before the page's own scripts (source text: the bench compiles without DOM types):
 * on every frame until a timeline row exists, then, in a task queued behind that frame's paint,
 * resolves `window.__stepboxRowsPainted` with the wall clock (`Date.now()`, the clock the bench
 * reads before navigating); `window.__stepboxAllPainted` likewise once the rows are there and the
 * window's ready marker is set (every pane mounted). Playwright's
 * `waitForSelector` polls at 0, 20, 50, 100, 100, then every 500 ms, and its first poll
 * evaluates its injected script on the page's main thread: the rows were seen 0.4–1.9 s after
 * they were painted (A/B on this 2-core machine), which the bench counted as the window's.
 */
export const PAINTED = `window.__stepboxRowsPainted = new Promise((resolve) => {
  const frame = () => {
    if (!document.querySelector('[data-testid="timeline-row"]')) return requestAnimationFrame(frame);
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve(Date.now());
    ch.port2.postMessage(null);
  };
  requestAnimationFrame(frame);
});
// The same for the whole window: the rows and every pane mounted (the app's ready marker, set
// once the panes after the first frame are in; a slow open mounts them before its rows come).
// A first render made faster by drawing less at first must not move the rest later unseen
// (issue 33.9).
window.__stepboxAllPainted = new Promise((resolve) => {
  const frame = () => {
    if (document.body?.dataset.ready !== 'true' || !document.querySelector('[data-testid="timeline-row"]'))
      return requestAnimationFrame(frame);
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve(Date.now());
    ch.port2.postMessage(null);
  };
  requestAnimationFrame(frame);
})`;
