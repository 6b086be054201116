import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import {
  LayoutObject,
  launchBrowser,
  openApp,
  PANELS,
  removeHome,
  startServe,
  tempHome,
} from '../support/e2e';

describe('web mode: first load', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows all seven panels with their empty states, no page error, and F5 does not reload', async () => {
    const home = tempHome();
    const served = await startServe({ home });
    try {
      const app = await openApp(browser, served.url);
      for (const id of PANELS) await expect(app.panel(id).count()).resolves.toBe(1);
      await expect(app.timeline.text()).resolves.toContain('No episode open');
      // A first open says what stepbox does and the three ways in; Open… opens its dialog.
      await expect(app.timeline.text()).resolves.toMatch(/steps through its episode like code in a debugger/);
      await expect(app.timeline.text()).resolves.toMatch(/A case[^]*A sample task[^]*Open…/);
      // Nothing to select yet: it says no episode is open, not "Select a step".
      await expect(app.inspector.text()).resolves.toContain(
        'No episode open: its steps show here once you start one.',
      );
      await expect(app.inspector.text()).resolves.not.toContain('Select a step');
      await expect(app.sandbox.text()).resolves.toContain('No episode open');
      await expect(app.replay.text()).resolves.toContain('Nothing to scrub');
      await expect(app.inject.text()).resolves.toContain('Open a live episode');
      await expect(app.terminal.text()).resolves.toContain('No live sandbox');
      // The bundled sample tasks and cases are listed from the real catalog.
      await app.library.waitForTasks();
      await expect(app.library.caseCards.count()).resolves.toBeGreaterThan(0);
      await app.sandbox.dockerStatus.filter({ hasText: 'docker ok' }).waitFor({ timeout: 20_000 });
      // Debugger keys are cancelled: F5 must not reload the page (the marker would vanish).
      await app.page.evaluate(() => ((window as unknown as { __marker: number }).__marker = 42));
      await app.page.keyboard.press('F5');
      await app.page.keyboard.press('F10');
      await expect(
        app.page.evaluate(() => (window as unknown as { __marker?: number }).__marker),
      ).resolves.toBe(42);
      // F10's answer is the one thing the inspector says: not "Select a step" under "No episode is open".
      await expect(app.stepper.hint.innerText()).resolves.toMatch(/^No episode is open/);
      await expect(app.inspector.text()).resolves.not.toContain('Select a step');
      await expect(app.inspector.text()).resolves.not.toContain('No episode open:');
      // Said in the box the panes' states have (Replay's here; Inject and Sandbox, fitted to their
      // sentence with nothing to edit, say it as a line), not after a lone accent bar at its left
      // edge, which read as a text caret in the empty inspector.
      const frame = (el: Element) => {
        const c = getComputedStyle(el);
        return [
          c.borderTopStyle,
          c.borderTopWidth,
          c.borderLeftStyle,
          c.borderLeftWidth,
          c.borderLeftColor,
        ].join(' ');
      };
      await expect(app.stepper.hint.evaluate(frame)).resolves.toBe(
        await app.replay.root.locator('.state').first().evaluate(frame),
      );
      await app.screenshot('first-load-empty');
      const layout = new LayoutObject(app.page);
      await app.resize({ width: 1920, height: 1080 });
      await app.screenshot('first-load-empty-1920x1080');
      // No column headings over the welcome ("# TOOL ARGUMENTS MARKS STATUS" sat above it), and
      // the welcome takes the wide pane's room (a 360 px card in an 880 px pane before).
      await expect(app.timeline.columnHeadings.isVisible()).resolves.toBe(false);
      const wide = await app.timeline.welcome.boundingBox();
      expect(wide!.width, 'the welcome at 1920×1080').toBeGreaterThanOrEqual(540);
      await app.resize({ width: 1024, height: 700 });
      await app.screenshot('first-load-empty-1024x700');
      // Whole at 1024×700: its last line ("Keys: ? lists them all") was cut at the pane's edge.
      expect(await layout.notWhollyInView(app.timeline.welcome)).toBe('');
      // The terminal says it has no sandbox at its top-left, where a person reads first (it
      // sat in the bottom-right corner of ~220 px of black).
      const status = await app.terminal.status();
      expect(status?.text).toMatch(/^No live sandbox/);
      expect(status!.left, 'status from the left edge').toBeLessThanOrEqual(12);
      expect(status!.top, 'status from the top edge').toBeLessThanOrEqual(12);
      await app.timeline.root.getByTestId('welcome-open').click();
      await app.library.openDialog.waitFor({ timeout: 10_000 });
      // The focus landing behind the backdrop while the dialog is open (a screen reader's cursor,
      // a control behind it focused by a script, a completion that re-rendered the field): it
      // comes back into the dialog, and Tab goes on inside it, never through the library.
      await app.page.evaluate(() =>
        document.querySelector<HTMLElement>('[data-testid="projects-open"]')?.focus(),
      );
      await expect(
        app.page.evaluate(() => !!document.activeElement?.closest('[data-testid="open-dialog"]')),
        'focus put on Open… behind the dialog',
      ).resolves.toBe(true);
      for (let i = 0; i < 3; i++) {
        await app.page.keyboard.press('Tab');
        await expect(
          app.page.evaluate(() => !!document.activeElement?.closest('[data-testid="open-dialog"]')),
          `Tab ${i + 1}`,
        ).resolves.toBe(true);
      }
      expect(app.errors).toEqual([]);
    } finally {
      await served.close();
      removeHome(home);
    }
  });

  it('with Docker unreachable, every panel is still there and the sandbox panel says what is wrong and how to fix it', async () => {
    const home = tempHome();
    const served = await startServe({ home, env: { DOCKER_HOST: 'tcp://127.0.0.1:1' } });
    try {
      const app = await openApp(browser, served.url);
      for (const id of PANELS) await expect(app.panel(id).count()).resolves.toBe(1);
      const problem = app.sandbox.root.getByTestId('docker-problem');
      await problem.waitFor({ timeout: 30_000 });
      // Words first: what is wrong and the fix; the errno only inside the closed details.
      await expect(problem.getByTestId('docker-headline').innerText()).resolves.toBe(
        'Docker is not running: stepbox needs it to start sandboxes.',
      );
      const text = await problem.innerText();
      expect(text).toMatch(/Fix:/);
      expect(text).not.toContain('ECONNREFUSED');
      await expect(app.sandbox.dockerStatus.innerText()).resolves.toBe('docker down');
      // What a person first sees: the headline and the fix, the details folded.
      await app.screenshot('docker-down');
      // Where a person is about to run a case or a sample task, once and briefly: running needs
      // Docker, and the fix (reading does not: a recorded episode or a case still opens). Only the
      // Sandbox pane said so; the welcome and the case list offered Run as if it would start.
      const needed = app.library.dockerNeeded;
      for (const size of [
        { width: 1024, height: 700 },
        { width: 1920, height: 1080 },
      ]) {
        const at = await app.resize(size);
        await expect(needed.getByTestId('docker-needed-what').innerText()).resolves.toBe(
          'Docker is not running.',
        );
        await expect(needed.getByTestId('docker-needed-fix').innerText()).resolves.toMatch(
          /^Fix: start the engine/,
        );
        expect(await new LayoutObject(app.page).unreadable(needed), at).toBe('');
        // Two lines at most (the doctor's fix took six at 1024×700): what is wrong and the fix.
        const lines = await needed.evaluate((el) => {
          // Each piece one line high, and the lines they sit on (their tops).
          const parts = Array.from(el.querySelectorAll('.docker-needed-lines > *, .docker-needed-tail > *'));
          const tall = parts.filter((p) => p.getBoundingClientRect().height > 24).length;
          const tops = new Set(parts.map((p) => Math.round(p.getBoundingClientRect().top / 4)));
          return { tall, lines: tops.size, height: el.getBoundingClientRect().height };
        });
        expect(lines.tall, at).toBe(0);
        expect(lines.lines, at).toBeLessThanOrEqual(2);
        expect(lines.height, at).toBeLessThanOrEqual(36);
        // The rest behind Details: runs need Docker, reading does not, and the whole fix.
        await needed.getByTestId('docker-needed-more').click();
        await expect(needed.getByTestId('docker-needed-details').innerText()).resolves.toMatch(
          /^Running a case or a sample task needs Docker; recorded episodes and cases still open without it\.\n+Fix: start the engine at DOCKER_HOST=tcp:\/\/127\.0\.0\.1:1/,
        );
        expect(await new LayoutObject(app.page).unreadable(needed), at).toBe('');
        await app.screenshot(`docker-down-library-details-${at}`);
        await needed.getByTestId('docker-needed-more').click();
        // Above the cases, the first thing a click there runs.
        const line = await needed.boundingBox();
        const firstCase = await app.library.root.getByTestId('library-case').first().boundingBox();
        expect(line!.y + line!.height, at).toBeLessThanOrEqual(firstCase!.y);
        const body = await app.page.locator('body').innerText();
        expect(body.split('Docker is not running.').length - 1, at).toBe(1);
        await expect(app.page.getByTestId('welcome').innerText()).resolves.not.toMatch(/Docker/);
        await app.screenshot(`docker-down-library-${at}`);
      }
      await problem.locator('summary').click();
      await expect(problem.innerText()).resolves.toMatch(/127\.0\.0\.1:1.*ECONNREFUSED/);
      expect(app.errors).toEqual([]);
    } finally {
      await served.close();
      removeHome(home);
    }
  });
});
