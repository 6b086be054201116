import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/** The replay panel's candidates section and its compare view, as a person uses them. */
function candidates(app: AppPage) {
  const root = app.replay.root;
  return {
    cards: () => root.getByTestId('candidate'),
    /** Gives the Replay pane room as a person would (the bottom splitter dragged up), shows `testId` at its top, and screenshots the window. */
    async shot(name: string, testId: string) {
      const viewport = app.page.viewportSize();
      const pane = await new LayoutObject(app.page).box('replay-controls');
      if (viewport && pane && pane.height < viewport.height * 0.45)
        await new LayoutObject(app.page).drag(
          'split-bottom',
          0,
          -Math.round(viewport.height * 0.45 - pane.height),
        );
      await root.getByTestId(testId).evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await app.screenshot(name);
    },
  };
}

describe('web mode: candidates side by side and a step-aligned comparison', () => {
  const web = servedApp();

  it('a live QA loop breakpoint offers candidates; two typed and the agent’s own run side by side; a pick continues; compare shows where it diverged', async () => {
    const app = await web.open({ width: 1600, height: 1000 });
    await app.library.openCase('tool-loop-vague-error');
    await app.settled({ timeoutMs: 60_000 });

    // Arm the QA breakpoint and run: the episode pauses at the step the loop rule flags, with its message.
    const toggle = app.page.getByTestId('breakpoints-toggle');
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
    await app.page.getByTestId('breakpoint-kind').selectOption('qa');
    await app.page.getByTestId('breakpoint-add').click();
    await app.page
      .locator('[data-testid="breakpoint-item"][data-kind="qa"]')
      .filter({ hasText: 'when a QA rule flags a step' })
      .waitFor();
    await app.page.keyboard.press('F5');
    const qa = app.replay.root.getByTestId('candidates-qa');
    await qa.waitFor({ timeout: 120_000 });
    await expect(qa.innerText()).resolves.toMatch(/QA rule \(loop\) flagged step 3: execute_shell called 3×/);
    expect(await app.timeline.lastStep()).toBe(3);
    await expect(app.page.getByTestId('stop-reason').innerText()).resolves.toMatch(/QA loop/);

    // "Try candidates here": candidates for the flagged step 3, each forked from step 2.
    await app.replay.root.getByTestId('candidates-here').click();
    await expect(app.replay.root.getByTestId('candidates-step').inputValue()).resolves.toBe('3');
    await app.replay.root.getByTestId('candidates-n').fill('1');
    await app.replay.root
      .getByTestId('candidates-typed')
      .fill('write_file {"path": "config.ini", "content": "mode=prod\\n"}\nread_file {"path": "app.py"}');
    await app.replay.root.getByTestId('candidates-try').click();
    const c = candidates(app);
    await until(
      () => c.cards().count(),
      (n) => n === 3,
      120_000,
      'three candidate cards',
    );
    const texts = await c.cards().allInnerTexts();
    // The agent's own candidate repeats the failing call; the typed ones did what was typed.
    expect(texts[0]).toMatch(/the agent[\s\S]*execute_shell[\s\S]*exit 1[\s\S]*something went wrong/);
    expect(texts[1]).toMatch(/typed[\s\S]*write_file[\s\S]*\+ config\.ini/);
    expect(texts[2]).toMatch(/typed[\s\S]*read_file[\s\S]*mode=prod/);
    expect(texts[0]).toMatch(/loop/);
    await c.shot('candidates-side-by-side-1600', 'candidates-grid');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await c.shot('candidates-side-by-side-1024x700', 'candidates-grid');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await c.shot('candidates-side-by-side-1920x1080', 'candidates-grid');

    // Pick the write_file candidate: the window follows the chosen branch, which runs to success.
    await c.cards().nth(1).getByTestId('candidate-pick').click();
    await app.replay.root
      .getByTestId('candidates-notice')
      .filter({ hasText: 'continuing candidate 2' })
      .waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 60_000 });
    expect(await app.timeline.lastStep()).toBe(3);
    await expect(app.timeline.row(3).innerText()).resolves.toMatch(/write_file/);
    await app.page.keyboard.press('F5');
    await app.page
      .getByTestId('episode-state')
      .filter({ hasText: 'succeeded' })
      .waitFor({ timeout: 120_000 });

    // Compare with the branch it was picked over: aligned steps, the first difference at step 3.
    await app.replay.root.locator('[data-testid="compare"] > summary').click();
    const other = await app.replay.root
      .getByTestId('compare-with')
      .locator('option')
      .evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value).filter(Boolean));
    const main = other.find((b) => b.startsWith('ep-')) ?? other[0];
    await app.replay.root.getByTestId('compare-with').selectOption(main);
    await app.replay.root.getByTestId('compare-run').click();
    const verdict = app.replay.root.getByTestId('compare-verdict');
    await verdict.waitFor({ timeout: 60_000 });
    await expect(verdict.innerText()).resolves.toMatch(/First difference at step 3/);
    const rows = app.replay.root.locator('[data-testid="compare-table"] tbody tr');
    await expect(rows.nth(0).getAttribute('data-verdict')).resolves.toBe('same');
    await expect(rows.nth(2).getAttribute('data-verdict')).resolves.toBe('different_action');
    await expect(app.replay.root.getByTestId('compare-sides').innerText()).resolves.toMatch(
      /succeeded[\s\S]*loop/,
    );
    await c.shot('compare-aligned-1920x1080', 'compare-verdict');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await c.shot('compare-aligned-1024x700', 'compare-verdict');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });
});
