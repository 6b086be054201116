import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp } from '../support/e2e';

/**
 * Issue 19 walk: the case drawer says the truth about what is on screen (which run, started
 * or not, or another episode), and the batch form's error stays on screen beside the open
 * drawer at 1280×800. Screenshots: `case-drawer-*.png`.
 */
describe('web mode: the case drawer tells what the window shows', () => {
  const web = servedApp();

  it('held at step 1, broken or fixed on screen, another episode open; the batch error in view', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    const { library } = app;
    const walkthrough = library.walkthrough;
    const layout = new LayoutObject(app.page);

    // "Pause before tools" on, the case opened and stepped: step 1 waits in the inspector, so
    // the run has started (today's main said "ready, not started: press ▶ Run it").
    await app.stepper.stopBeforeTool.check();
    await library.openCase('network-assumed');
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await app.settled();
    await app.page.keyboard.press('F10');
    await app.held.waitBeforeTool(1);
    const broken = library.caseRun('broken');
    await broken.filter({ hasText: 'paused before step 1 runs' }).waitFor({ timeout: 10_000 });
    // On one line at 1280×800 (with its way on, "press ▶ Run it to go on", it took both of the
    // run line's lines); the way on is in its hover, beside the ▶ Run it button above it.
    const pausedText = broken.locator('.case-run-text');
    expect(await layout.lineStarts(pausedText)).toEqual(['paused befor']);
    await expect(pausedText.getAttribute('title')).resolves.toBe(
      'paused before step 1 runs: press ▶ Run it to go on',
    );
    expect(await broken.innerText()).not.toMatch(/not started/);
    // The library and the timeline count alike: step 1, decided and waiting to run, is a row
    // but no step done (they said "0 steps" and "1 step", then "1 step" both).
    await expect(app.timeline.stepCount.innerText()).resolves.toBe('step 1 waiting');
    const branch = await app.stepper.branch();
    await library
      .branchSteps(branch)
      .filter({ hasText: /^step 1 waiting$/ })
      .waitFor({ timeout: 10_000 });
    await app.screenshot('case-drawer-held-step1');

    // Run to the end, then the fixed version; a click on the broken run puts it back on screen
    // and the drawer says so (it said "fixed version open" whatever was shown).
    await app.stepper.stopBeforeTool.uncheck();
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(120_000);
    await walkthrough.getByTestId('case-run-variant').click();
    await walkthrough
      .locator('[data-testid="case-run"][data-variant="fixed"].current')
      .waitFor({ timeout: 120_000 });
    // Its run line says how it ended (the stepper's "none" while it opens reads as an end).
    const fixed = library.caseRun('fixed');
    await fixed
      .getByTestId('case-run-flags')
      .filter({ hasText: 'no QA flags' })
      .waitFor({ timeout: 120_000 });
    await app.stepper.waitForState('ended');
    await expect(library.caseShown.innerText()).resolves.toBe('fixed version open');
    await broken.click();
    await walkthrough.locator('[data-testid="case-run"][data-variant="broken"].current').waitFor();
    await library.caseShown.filter({ hasText: 'broken version open' }).waitFor({ timeout: 10_000 });
    expect(await walkthrough.getByTestId('case-run-variant').innerText()).toContain('Run the fixed version');
    await app.screenshot('case-drawer-broken-shown');

    // The batch form's range error, typed with the drawer open, is on screen with the field.
    const concurrency = app.batches.root.getByTestId('batch-concurrency');
    await concurrency.fill('100000');
    const problem = app.batches.root.getByTestId('batch-problem');
    await problem.waitFor();
    expect(await layout.onScreen(problem)).toBe(true);
    expect(await layout.onScreen(concurrency)).toBe(true);
    await app.screenshot('case-drawer-batch-error-1280x800');
    await concurrency.fill('2');

    // hello-python on screen: the drawer says it is not the case's and folds its text away;
    // the broken run's line is the way back.
    await library.startTask('hello-python');
    const away = walkthrough.getByTestId('case-away');
    await away.filter({ hasText: 'hello-python, not a run of this case' }).waitFor({ timeout: 60_000 });
    expect(await walkthrough.locator('.panel-body').isVisible()).toBe(false);
    // The drawer stays, shrunk to its note and runs, each on screen (the way back in reach).
    expect(await layout.onScreen(away)).toBe(true);
    expect(await layout.onScreen(broken)).toBe(true);
    expect(await walkthrough.getByTestId('case-run-variant').count()).toBe(0);
    await app.screenshot('case-drawer-other-episode');
    await broken.click();
    await library.caseShown.filter({ hasText: 'broken version open' }).waitFor({ timeout: 60_000 });
    expect(await walkthrough.locator('.panel-body').isVisible()).toBe(true);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 420_000);
});
