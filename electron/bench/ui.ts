import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { median } from '../../shared/median.js';
import { startServer } from '../server.js';
import type { BenchSection } from './bench-section.js';
import { writeLongTrace } from './ui-trace.js';
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseRedactions } from '../engine/export/redact.js';
import { openEngine } from '../engine/open-engine.js';
import { shareData } from '../engine/share/share-data.js';
import { shareHtml } from '../engine/share/share-html.js';

const CHROMIUM = '/usr/bin/chromium';
const STEPS = 10_000;
const RENDER_RUNS = 5;
const SCRUB_PRESSES = 15;
const CLICKS = 11;
const DIST = fileURLToPath(new URL('../../../renderer/dist/index.html', import.meta.url));

// Scripts run in the page (this file compiles without DOM types, so they are source text).
const NEXT_FRAME = 'new Promise((r) => requestAnimationFrame(() => r(null)))';
const OPEN_WAIT = `(() => {
  const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? 0;
  return at('stepbox:open-received') - at('stepbox:open-sent');
})()`;

/** Presses → on window and times the new step to painted selection and to its inspector detail. */
function scrubScript(step: number): string {
  return `(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const t0 = performance.now();
    window.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true, cancelable: true }));
    while (!document.querySelector('[data-testid="timeline-row"][data-step="${step}"][aria-selected="true"]')) await frame();
    await frame();
    const select = performance.now() - t0;
    while (!document.querySelector('[data-testid="inspector-step"][data-step="${step}"]')) {
      if (performance.now() - t0 > 60000) throw new Error('step ${step} detail not shown in 60 s');
      await frame();
    }
    return { select, detail: performance.now() - t0 };
  })()`;
}

/** In the page: resolves after the next paint (a frame, then a task queued behind its paint). */
const AFTER_PAINT = `() => new Promise((r) => requestAnimationFrame(() => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => r(null);
  ch.port2.postMessage(null);
}))`;

/**
 * Clicks the timeline row of `step` and times it to the inspector showing that step,
 * painted (the detail comes from the server, so this includes its step-detail call).
 */
function rowClickScript(step: number): string {
  return `(async () => {
    const painted = ${AFTER_PAINT};
    const row = document.querySelector('[data-testid="timeline-row"][data-step="${step}"]');
    if (!row) throw new Error('row ${step} is not drawn');
    const t0 = performance.now();
    row.click();
    while (!document.querySelector('[data-testid="inspector-step"][data-step="${step}"]')) {
      if (performance.now() - t0 > 60000) throw new Error('step ${step} detail not shown in 60 s');
      await new Promise((r) => requestAnimationFrame(r));
    }
    await painted();
    return performance.now() - t0;
  })()`;
}

/** Moves the scrubber to `step` as a drag would (an input event) and times it to the row selected and painted. */
function scrubJumpScript(step: number): string {
  return `(async () => {
    const painted = ${AFTER_PAINT};
    const input = document.querySelector('[data-testid="scrubber"]');
    const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    const t0 = performance.now();
    set.call(input, '${step}');
    input.dispatchEvent(new Event('input', { bubbles: true }));
    while (!document.querySelector('[data-testid="timeline-row"][data-step="${step}"][aria-selected="true"]')) {
      if (performance.now() - t0 > 60000) throw new Error('step ${step} not selected in 60 s');
      await new Promise((r) => requestAnimationFrame(r));
    }
    await painted();
    return performance.now() - t0;
  })()`;
}

/** Row clicks and scrubber jumps on the open page: medians of each. */
async function clicksAndJumps(page: Page, runs: number): Promise<{ click: number; jump: number }> {
  const clicks: number[] = [];
  const jumps: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Jump far (a different thousand each time), then click a neighbouring row already drawn.
    const target = 1_000 + ((i * 1_237) % 8_000);
    jumps.push(await page.evaluate<number>(scrubJumpScript(target)));
    clicks.push(await page.evaluate<number>(rowClickScript(target + 1 + (i % 3))));
  }
  return { click: median(clicks), jump: median(jumps) };
}

/**
 * Opens a case's walkthrough (the case's own episode needs Docker; its walkthrough does
 * not), goes back to the long trace and opens What-if: the drawers a person works with.
 */
async function openDrawers(page: Page, branch: string): Promise<boolean> {
  const card = page.locator('[data-testid="library-case"]').first();
  if ((await card.count()) === 0) return false;
  await card.click();
  // The walkthrough text shows once the case's start has settled (both are awaited together);
  // with Docker that switched to the case's episode: go back to the long trace.
  await page.waitForSelector('[data-testid="case-walkthrough"] .markdown', { timeout: 120_000 });
  await page.locator(`[data-testid="branch-node"][data-branch="${branch}"]`).first().click();
  await page.waitForSelector(`[data-testid="episode-id"][data-id="${branch}"]`, { timeout: 60_000 });
  await page.waitForSelector('[data-testid="timeline-row"]', { timeout: 60_000 });
  // What-if offers the viewed step's call: view a step that made one (the last is the final answer).
  await page.evaluate<number>(scrubJumpScript(5_000));
  await page.waitForSelector('[data-testid="inspector-step"][data-step="5000"]', { timeout: 60_000 });
  await page.locator('[data-testid="whatif"] > summary').click();
  return (await page.locator('[data-testid="case-walkthrough"]').count()) > 0;
}

/**
 * `stepbox share` of the long trace opened from file:// (medians of 3 opens in a warm
 * page): navigation to the timeline and the first step's inspector drawn, and the file's size.
 */
async function shareRender(
  browser: Browser,
  home: string,
  branch: string,
): Promise<{ ms: number; bytes: number }> {
  const { store } = openEngine({ home, sweep: false });
  const html = shareHtml(await shareData(store, branch, parseRedactions([])));
  const file = join(home, 'share.html');
  await writeFile(file, html);
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.setContent('<p>warm</p>');
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
    runs.push(await page.evaluate<number>('window.__shareFirstRenderMs'));
    await page.close();
  }
  return { ms: median(runs), bytes: Buffer.byteLength(html) };
}

/** Opens the app on the long trace; resolves with the ms from navigation to its rows on screen. */
async function firstRender(
  browser: Browser,
  url: string,
  branch: string,
): Promise<{ ms: number; wait: number; page: Page }> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const t0 = performance.now();
  await page.goto(`${url}&open=${encodeURIComponent(branch)}`);
  await page.waitForSelector('[data-testid="timeline-row"]', { timeout: 120_000 });
  // One frame after the rows exist: they have been painted.
  await page.evaluate(NEXT_FRAME);
  const ms = performance.now() - t0;
  // The stepper marks when it asked for the trace and when the server answered.
  const wait = await page.evaluate<number>(OPEN_WAIT);
  return { ms, wait, page };
}

/**
 * One → keypress while scrubbing, measured in the page: to the new step selected and
 * painted in the timeline (`select`), and to its detail shown in the inspector (`detail`,
 * which includes the server's step-detail call).
 */
function scrubOnce(page: Page, target: number): Promise<{ select: number; detail: number }> {
  return page.evaluate<{ select: number; detail: number }>(scrubScript(target));
}

/** `stepbox bench` section `ui`: the window on a 10,000-step trace in Chromium (web mode). */
export const section: BenchSection = {
  name: 'ui',
  async prerequisite() {
    if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
    if (!existsSync(DIST)) return 'the renderer is not built (npm run build)';
    return null;
  },
  async run(log) {
    const home = await mkdtemp(join(tmpdir(), 'stepbox-bench-ui-'));
    const server = await startServer({ port: 0, host: '127.0.0.1', home });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      log(`ui: writing a ${STEPS}-step trace`);
      const trace = await writeLongTrace(home, STEPS);
      const renders: number[] = [];
      const waits: number[] = [];
      let page: Page | null = null;
      for (let i = 0; i < RENDER_RUNS; i++) {
        const r = await firstRender(browser, server.url, trace.branch);
        renders.push(r.ms);
        waits.push(r.wait);
        if (i < RENDER_RUNS - 1) await r.page.close();
        else page = r.page;
      }
      log(`ui: first render ${renders.map((x) => x.toFixed(0)).join(', ')} ms`);
      const p = page as Page;
      // Scrub from step 5,000 forward, as a person holding → would.
      await p.evaluate(`document.querySelector('[data-testid="timeline-scroll"]').scrollTop = ${4_999 * 22}`);
      await p.locator('[data-testid="timeline-row"][data-step="5000"]').click();
      await p.waitForSelector('[data-testid="inspector-step"][data-step="5000"]', { timeout: 60_000 });
      const selects: number[] = [];
      const details: number[] = [];
      for (let i = 1; i <= SCRUB_PRESSES; i++) {
        const r = await scrubOnce(p, 5_000 + i);
        selects.push(r.select);
        details.push(r.detail);
      }
      const rowNodes = await p.locator('[data-testid="timeline-row"]').count();
      log(`ui: step change ${selects.map((x) => x.toFixed(1)).join(', ')} ms`);
      const plain = await clicksAndJumps(p, CLICKS);
      log(
        `ui: row click → inspector painted ${plain.click.toFixed(1)} ms, scrubber jump ${plain.jump.toFixed(1)} ms`,
      );
      const shared = await shareRender(browser, home, trace.branch);
      log(
        `ui: stepbox share file ${shared.bytes} bytes, first render from file:// ${shared.ms.toFixed(0)} ms`,
      );
      const drawers = await openDrawers(p, trace.branch);
      const withDrawers = drawers ? await clicksAndJumps(p, CLICKS) : null;
      if (withDrawers)
        log(
          `ui: with walkthrough and What-if open: click ${withDrawers.click.toFixed(1)} ms, jump ${withDrawers.jump.toFixed(1)} ms`,
        );
      return {
        ui_trace_steps: STEPS,
        ui_first_render_ms: median(renders),
        ui_first_render_server_wait_ms: median(waits),
        ui_step_change_ms: median(selects),
        ui_step_detail_ms: median(details),
        ui_row_nodes: rowNodes,
        share_first_render_ms: shared.ms,
        share_file_bytes: shared.bytes,
        share_target_met: shared.ms <= 2000,
        ui_row_click_inspector_ms: plain.click,
        ui_scrub_jump_ms: plain.jump,
        ...(withDrawers
          ? {
              ui_row_click_inspector_drawers_ms: withDrawers.click,
              ui_scrub_jump_drawers_ms: withDrawers.jump,
            }
          : {}),
      };
    } finally {
      await browser.close();
      await server.close();
      await rm(home, { recursive: true, force: true });
    }
  },
};
