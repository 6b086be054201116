/**
 * What a window does while a screenshot of it does not come: whether it paints, and how busy its
 * main thread is. A window that paints no frame, or spends the whole second on its main thread, is
 * frozen for a person too; one that paints frames and idles was left by Chromium's capture.
 */
import { writeFileSync } from 'node:fs';
import type { CDPSession, Page } from 'playwright-core';

/** Measured over about a second of the window's own time (nothing asked of it meanwhile). */
export interface PaintFacts {
  /**
   * Animation frames the window ran in the second; null: its main thread did not answer in 5 s
   * (then the counts below are 0, unknown).
   */
  readonly frames: number | null;
  /** Layouts and style recalculations Chromium counted meanwhile. */
  readonly layouts: number;
  readonly styles: number;
  /** Time the main thread spent on tasks (all of them, scripts among them), and the wall time. */
  readonly taskMs: number;
  readonly scriptMs: number;
  readonly wallMs: number;
}

/** The window's layouts in a second, above which it lays itself out with nothing asked of it. */
const LAYOUT_LOOP = 30;
/** The share of the second its main thread may be busy before it is frozen for a person. */
const BUSY_SHARE = 0.9;

export function factsText(f: PaintFacts): string {
  if (f.frames === null) return `no answer in 5 s, asked for ${Math.round(f.wallMs)} ms`;
  return `${f.frames} frames, ${f.layouts} layouts, ${f.styles} style recalcs, main thread busy ${Math.round(f.taskMs)} ms (scripts ${Math.round(f.scriptMs)} ms) of ${Math.round(f.wallMs)} ms`;
}

/** Why the window is frozen as these facts say, in words; null: it paints and idles. */
export function frozenWhy(f: PaintFacts): string | null {
  const facts = factsText(f);
  if (f.frames === null) return `the window's main thread did not answer in 5 s: it is frozen (${facts})`;
  if (f.frames === 0) return `the window painted no frame in a second: it is frozen (${facts})`;
  if (f.taskMs >= BUSY_SHARE * f.wallMs)
    return `the window's main thread was busy the whole second: it is frozen (${facts})`;
  if (f.layouts >= LAYOUT_LOOP)
    return `the window laid itself out ${f.layouts} times in a second with nothing asked of it: a layout loop (${facts})`;
  return null;
}

/** `work`'s answer, or null when it gives none in `ms` (a main thread that does not answer). */
function within<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function metrics(cdp: CDPSession): Promise<Map<string, number> | null> {
  const answer = await within(cdp.send('Performance.getMetrics'), 5_000);
  return answer && new Map(answer.metrics.map((m) => [m.name, m.value]));
}

const NO_ANSWER = { frames: null, layouts: 0, styles: 0, taskMs: 0, scriptMs: 0 } as const;

/**
 * Counts the window's frames over a second, with Chromium's counts of its work meanwhile; each
 * question bounded (Chromium's metrics too are read on the window's main thread).
 */
export async function paintFacts(page: Page): Promise<PaintFacts> {
  const t0 = Date.now();
  const cdp = await within(page.context().newCDPSession(page), 5_000);
  if (!cdp) return { ...NO_ANSWER, wallMs: Date.now() - t0 };
  try {
    await within(cdp.send('Performance.enable'), 5_000);
    const before = await metrics(cdp);
    if (!before) return { ...NO_ANSWER, wallMs: Date.now() - t0 };
    const t1 = Date.now();
    const frames = await within(
      page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            let n = 0;
            const end = performance.now() + 1000;
            const tick = (): void => {
              n++;
              if (performance.now() < end) requestAnimationFrame(tick);
              else resolve(n);
            };
            requestAnimationFrame(tick);
            // A window that paints nothing resolves too: with the frames it ran.
            setTimeout(() => resolve(n), 1500);
          }),
      ),
      5_000,
    );
    const after = frames === null ? null : await metrics(cdp);
    if (!after) return { ...NO_ANSWER, wallMs: Date.now() - t0 };
    const delta = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    return {
      frames,
      layouts: delta('LayoutCount'),
      styles: delta('RecalcStyleCount'),
      taskMs: delta('TaskDuration') * 1000,
      scriptMs: delta('ScriptDuration') * 1000,
      wallMs: Date.now() - t1,
    };
  } finally {
    // Not awaited: a session whose page does not answer may not answer its detach either.
    void cdp.detach().catch(() => undefined);
  }
}

/**
 * The window's next frame as Chromium's screencast draws it, whole, written to `path` as PNG:
 * the picture a stalled capture did not give (the compositor's own frame, not a re-render).
 * False when no frame came in 5 s.
 */
export async function screencastShot(page: Page, path: string): Promise<boolean> {
  const cdp = await within(page.context().newCDPSession(page), 5_000);
  if (!cdp) return false;
  try {
    const frame = new Promise<string>((resolve) => {
      cdp.on('Page.screencastFrame', (f) => {
        void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => undefined);
        resolve(f.data);
      });
    });
    const size = page.viewportSize();
    await within(
      cdp.send('Page.startScreencast', {
        format: 'png',
        ...(size ? { maxWidth: size.width, maxHeight: size.height } : {}),
      }),
      5_000,
    );
    const data = await within(frame, 5_000);
    await within(cdp.send('Page.stopScreencast'), 5_000);
    if (data === null) return false;
    writeFileSync(path, Buffer.from(data, 'base64'));
    return true;
  } finally {
    void cdp.detach().catch(() => undefined);
  }
}
