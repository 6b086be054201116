import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../../electron/bench/chromium.js';
import { screencastShot } from '../support/paint-facts';

// The picture the e2e helper keeps when Chromium's capture stalls on a window that paints
// (test/support/e2e.ts): the screencast's next frame, whole, at the viewport's size.
it("a stalled capture's stand-in is the window's own frame, at its size", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-screencast-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
  try {
    const page = await browser.newPage({ viewport: { width: 1024, height: 700 } });
    await page.setContent('<body style="margin:0;background:rgb(204,51,51)"><h1>frame</h1></body>');
    const path = join(dir, 'frame.png');
    expect(await screencastShot(page, path)).toBe(true);
    const png = readFileSync(path);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 700]);
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
