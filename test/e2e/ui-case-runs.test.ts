import { describe, expect, it } from 'vitest';
import { LayoutObject, runCase, servedApp, until, type AppPage } from '../support/e2e';

const SMALL = { width: 1024, height: 700 } as const;
const LARGE = { width: 1920, height: 1080 } as const;

async function shots(app: AppPage, name: string): Promise<void> {
  await app.screenshot(`case-runs-${name}-1024x700`);
  await app.resize(LARGE);
  // No case card reads as selected beside the open episode (the one the pointer was left over
  // after the resize took a hovered button's accent border).
  expect(await app.library.markedCases(), `cards marked at 1920x1080 (${name})`).toEqual([]);
  await app.screenshot(`case-runs-${name}-1920x1080`);
  await app.resize(SMALL);
}

/**
 * A new user's walk of a case's two runs: the case opened again to read it, even after a
 * reload, keeps its ended broken run (it started an empty one, which "Run the fixed version" then stopped at step 0
 * and Compare compared). Screenshots: `case-runs-*.png`.
 */
describe('web mode: a case’s broken and fixed runs', () => {
  const web = servedApp();

  it('opened again, the ended broken run stays; Compare uses the run that ended, not one stopped at step 0', async () => {
    const app = await web.open(SMALL);
    const { library } = app;
    const walkthrough = library.walkthrough;
    await runCase(app, 'destructive-clean-start');
    const broken = library.caseRun('broken');
    await broken.getByTestId('case-run-flags').filter({ hasText: '2 QA flags' }).waitFor({ timeout: 30_000 });
    const ended = await app.stepper.branch();

    // After a reload (the window's memory of its case runs gone with the page), the card clicked
    // again: the ended run comes back, no new run is started (it was one at step 0).
    await app.page.reload();
    await app.waitForReady();
    await library.openCase('destructive-clean-start');
    const reopened = walkthrough.getByTestId('case-reopened');
    await reopened.waitFor({ timeout: 30_000 });
    expect(await reopened.innerText()).toContain('does not start a new one');
    expect(await app.stepper.branch()).toBe(ended);
    expect(await broken.getAttribute('data-branch')).toBe(ended);
    await expect(broken.getByTestId('case-run-status').innerText()).resolves.toBe('failed');
    await shots(app, 'reopened');

    // A fresh broken run asked for, then left for the fixed one before its first step: stopped
    // at step 0, it gives way to the run that ended (the drawer said "no QA flags · interrupted").
    await walkthrough.getByTestId('case-run-again').click();
    await until(
      () => app.stepper.branch(),
      (b) => b !== ended,
      60_000,
      'a new broken run opened',
    );
    await app.stepper.waitForStopped(90_000);
    // The fixed run's line reads the bar's state: it said "live, at step 3" beside "succeeded".
    const apart = await library.watchRunLineAgainstBar('fixed');
    await walkthrough.getByTestId('case-run-variant').click();
    const fixed = library.caseRun('fixed');
    await walkthrough
      .locator('[data-testid="case-run"][data-variant="fixed"].current')
      .waitFor({ timeout: 120_000 });
    // The fixed run runs at once (issue 19 item 8); the broken run left at step 0 gives way.
    await until(
      () => broken.getAttribute('data-branch'),
      (b) => b === ended,
      30_000,
      'the broken run line back on the run that ended',
    );
    await expect(broken.getByTestId('case-run-status').innerText()).resolves.toBe('failed');
    await expect(broken.getByTestId('case-run-flags').innerText()).resolves.toContain('2 QA flags');
    await app.stepper.waitForEnd(120_000);
    await expect(fixed.getByTestId('case-run-status').innerText()).resolves.toBe('succeeded');
    // Wrapped, no line begins with the dash: it stays with its word ("failed —" / "the agent…").
    const layout = new LayoutObject(app.page);
    for (const size of [SMALL, { width: 1280, height: 800 }, LARGE]) {
      const at = await app.resize(size);
      for (const run of [broken, fixed]) {
        const starts = await layout.lineStarts(run);
        expect(starts.length, `${at} ${starts.join(' | ')}`).toBeGreaterThan(1);
        expect(
          starts.filter((line) => line.startsWith('—')),
          at,
        ).toEqual([]);
      }
    }
    await app.resize(SMALL);
    await shots(app, 'fixed-ended');
    await fixed.getByTestId('case-run-flags').filter({ hasText: 'no QA flags' }).waitFor({ timeout: 60_000 });
    expect(await apart.read(), 'the bar ended while the fixed run line went on').toEqual([]);

    // Compare: the broken run that ended beside the fixed run, not an empty one.
    await library.compareCaseRuns();
    await app.page.getByTestId('compare-sides').waitFor({ timeout: 60_000 });
    expect(await app.stepper.branch()).toBe(ended);
    const verdict = await app.page.getByTestId('compare-verdict').innerText();
    expect(verdict).not.toMatch(/ends at step 0/);
    // The broken run's 3 steps are beside the fixed run's 4: only the fixed run's last is unmatched
    // (every row said the broken run had not reached it, against the run stopped at step 0).
    const table = await app.page.getByTestId('compare-table').innerText();
    expect(table.split('Broken run did not reach this step').length - 1).toBe(1);
    // A file only one run has says which run, by the column's name ("only in the other" left it to guess).
    expect(table).toContain('(only in the fixed run)');
    expect(table).not.toContain('the other');
    await shots(app, 'compare');

    // The window's memory of its case runs is the page's localStorage, anyone's to edit: an entry
    // naming this episode as another case's broken run reopened it as that case's. Now the card
    // checks the run's task, forgets it, says so, and starts the case afresh.
    await app.page.evaluate(
      (b) =>
        localStorage.setItem(
          'stepbox.case-runs.v1',
          JSON.stringify({ 'fatal-error': { runs: { broken: b } } }),
        ),
      ended,
    );
    await app.page.reload();
    await app.waitForReady();
    await library.openCase('fatal-error');
    const forgotten = app.notices.ofKind('case-memory');
    await forgotten.waitFor({ timeout: 30_000 });
    expect(await forgotten.innerText()).toContain(
      `the broken run of case fatal-error (${ended}) is an episode of task "destructive-clean-start", not of the case's own task "fatal-error": it is forgotten, and the case starts afresh.`,
    );
    await until(
      () => app.stepper.branch(),
      (b) => b !== null && b !== ended,
      60_000,
      'the case started afresh',
    );
    expect(await walkthrough.getByTestId('case-reopened').count()).toBe(0);
    await shots(app, 'foreign-run-forgotten');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 600_000);
});
