import { describe, expect, it } from 'vitest';
import { PAINTED } from '../../electron/bench/painted-script.js';

/**
 * The page's MessageChannel as the script uses it (a task queued behind the paint): the
 * message is handed over in a microtask, so the tests wait for no timer.
 */
class TaskChannel {
  readonly port1: { onmessage: ((e: unknown) => void) | null } = { onmessage: null };
  readonly port2 = { postMessage: () => queueMicrotask(() => this.port1.onmessage?.(null)) };
}

/** A page as the script sees it: frames run by hand, a row and the ready marker set by hand. */
function fakePage() {
  const frames: (() => void)[] = [];
  const page = {
    window: {} as { __stepboxRowsPainted?: Promise<number>; __stepboxAllPainted?: Promise<number> },
    row: false,
    body: { dataset: {} as Record<string, string> },
    frame() {
      for (const f of frames.splice(0)) f();
    },
  };
  const document = {
    querySelector: (selector: string) =>
      selector === '[data-testid="timeline-row"]' && page.row ? {} : null,
    get body() {
      return page.body;
    },
  };
  const run = new Function('window', 'document', 'requestAnimationFrame', 'MessageChannel', PAINTED);
  run(page.window, document, (f: () => void) => frames.push(f), TaskChannel);
  return page;
}

/** Whether `p` settled by now (once the microtasks queued so far ran: setImmediate comes after them all). */
async function settled(p: Promise<number> | undefined): Promise<boolean> {
  let done = false;
  void p?.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe("the UI bench's paint clocks", () => {
  it('times the rows at the first frame holding a row, and the whole window only once every pane is mounted too', async () => {
    const page = fakePage();
    page.frame();
    expect(await settled(page.window.__stepboxRowsPainted)).toBe(false);
    page.row = true;
    page.frame();
    expect(await settled(page.window.__stepboxRowsPainted)).toBe(true);
    // Rows alone (the first commit draws the stepper bar and the timeline only) are not the window.
    page.frame();
    expect(await settled(page.window.__stepboxAllPainted)).toBe(false);
    page.body.dataset.ready = 'true';
    page.frame();
    const all = page.window.__stepboxAllPainted;
    expect(await settled(all)).toBe(true);
    expect(await all).toBeGreaterThanOrEqual(await (page.window.__stepboxRowsPainted as Promise<number>));
  });

  it('does not call a window whose panes came before its rows (a slow open) painted until the rows are', async () => {
    const page = fakePage();
    page.body.dataset.ready = 'true';
    page.frame();
    expect(await settled(page.window.__stepboxAllPainted)).toBe(false);
    page.row = true;
    page.frame();
    expect(await settled(page.window.__stepboxAllPainted)).toBe(true);
  });
});
