import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/** A long argument, one word with no space to break at: it must wrap inside its card, not widen it. */
const LONG = `# ${'keep-this-setting-for-production-'.repeat(8)}`;

/**
 * At the window's current size: the side-by-side view takes at least half the window,
 * nothing in it scrolls sideways, each card's Pick is on screen without scrolling (when
 * cards are shown), and the window's screenshot is saved as `name`.
 */
async function roomy(app: AppPage, name: string, top: string): Promise<void> {
  expect(await app.sideBySide.heightShare()).toBeGreaterThanOrEqual(0.5);
  await app.sideBySide.root.getByTestId('side-by-side-body').evaluate((el) => (el.scrollTop = 0));
  expect(await app.sideBySide.sidewaysScrolls()).toEqual([]);
  const layout = new LayoutObject(app.page);
  const picks = app.sideBySide.cards().getByTestId('candidate-pick');
  for (let i = 0; i < (await picks.count()); i++) expect(await layout.onScreen(picks.nth(i))).toBe(true);
  // Lines break at spaces and hyphens, not inside a word ("config.in" / "i", "productio" / "n").
  for (const card of await app.sideBySide.cards().all())
    for (const word of ['config.ini', 'production'])
      expect(await layout.wordLines(card, word), `"${word}" in a card`).toBeLessThanOrEqual(1);
  await app.sideBySide.scrollTo(top);
  await app.screenshot(name);
}

describe('web mode: candidates side by side and a step-aligned comparison', () => {
  const web = servedApp();

  it('a live QA loop breakpoint offers candidates; two typed and the agent’s own run side by side; a pick continues; compare shows where it diverged', async () => {
    const app = await web.open({ width: 1600, height: 1000 });
    await app.library.openCase('tool-loop-vague-error');
    await app.settled({ timeoutMs: 60_000 });

    // Arm the QA breakpoint and run: the episode pauses at the step the loop rule flags, with its message.
    const toggle = app.breakpoints.toggle;
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
    await app.breakpoints.kindField.selectOption('qa');
    await app.breakpoints.addButton.click();
    await app.breakpoints.itemsOfKind('qa').filter({ hasText: 'when a QA rule flags a step' }).waitFor();
    await app.page.keyboard.press('F5');
    const qa = app.replay.root.getByTestId('candidates-qa');
    await qa.waitFor({ timeout: 120_000 });
    await expect(qa.innerText()).resolves.toMatch(
      /^QA flagged “Loop” at step 3: execute_shell called 3× with the same arguments/,
    );
    expect(await app.timeline.lastStep()).toBe(3);
    // What stopped it, in words (it read "… QA loop: …" after the list of rules it might have been).
    await expect(app.stepper.stopReason.innerText()).resolves.toMatch(
      /^paused: QA flagged “Loop”: execute_shell called 3× with the same arguments \(spacing and quoting aside\)/,
    );

    await app.screenshot('candidates-qa-stop-1600');

    // "Try candidates here": candidates for the flagged step 3, each forked from step 2, in a view of their own.
    await app.replay.root.getByTestId('candidates-here').click();
    const view = app.sideBySide;
    await view.root.waitFor();
    await expect(view.root.getAttribute('data-view')).resolves.toBe('candidates');
    await expect(view.root.getByTestId('candidates-step').inputValue()).resolves.toBe('3');
    await view.tryCandidates({
      n: 1,
      typed: `write_file {"path": "config.ini", "content": "mode=prod\\n${LONG}\\n"}\nread_file {"path": "app.py"}`,
    });
    await until(
      () => view.cards().count(),
      (n) => n === 3,
      120_000,
      'three candidate cards',
    );
    const texts = await view.cards().allInnerTexts();
    // The agent's own candidate repeats the failing call; the typed ones did what was typed.
    expect(texts[0]).toMatch(/the agent[\s\S]*execute_shell[\s\S]*exit 1[\s\S]*something went wrong/);
    expect(texts[1]).toMatch(/typed[\s\S]*write_file[\s\S]*\+ config\.ini/);
    expect(texts[2]).toMatch(/typed[\s\S]*read_file[\s\S]*mode=prod/);
    // The rule by its label; the id in its tooltip.
    expect(texts[0]).toMatch(/⚑ Loop: /);
    // Counted in words, agreed in number (it read "3 candidate(s)").
    const heading = await view.root.innerText();
    expect(heading).toMatch(new RegExp(`${texts.length} candidates for step \\d+, each in its own fork`));
    expect(heading).not.toContain('(s)');
    // The long argument is there whole, wrapped inside its card (not cut, no sideways scroll).
    const action = view.cards().nth(1).locator('.cand-action');
    expect((await action.innerText()).replace(/\s+/g, '')).toContain(LONG.replace(/\s+/g, ''));
    expect(await action.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await roomy(app, 'candidates-side-by-side-1600', 'candidates');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await roomy(app, 'candidates-side-by-side-1024x700', 'candidates');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await roomy(app, 'candidates-side-by-side-1920x1080', 'candidates');

    // Pick the write_file candidate: the view closes and the window follows the chosen branch, which runs to success.
    await view.pick(1);
    await app.replay.root
      .getByTestId('candidates-notice')
      .filter({ hasText: 'continuing candidate 2' })
      .waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 60_000 });
    expect(await app.timeline.lastStep()).toBe(3);
    await expect(app.timeline.row(3).innerText()).resolves.toMatch(/write_file/);
    await app.page.keyboard.press('F5');
    await app.stepper.episodeState.filter({ hasText: 'succeeded' }).waitFor({ timeout: 120_000 });

    // Compare with the branch it was picked over: aligned steps, the first difference at step 3.
    await view.openCompare();
    const other = await view.compareChoices();
    const main = other.find((b) => b.startsWith('ep-')) ?? other[0];
    const verdict = await view.compareWith(main);
    await expect(verdict.innerText()).resolves.toMatch(/First difference at step 3/);
    const rows = view.root.locator('[data-testid="compare-table"] tbody tr');
    await expect(rows.nth(0).getAttribute('data-verdict')).resolves.toBe('same');
    await expect(rows.nth(2).getAttribute('data-verdict')).resolves.toBe('different_action');
    // The fork's step 3 pairs with the other's step 3 (it paired the fork's final answer, step 5,
    // with it, and said the other had no step 3 beside the other's step 3).
    await expect(rows.nth(2).locator('td').nth(0).innerText()).resolves.toBe('3');
    await expect(rows.nth(2).locator('td').nth(1).innerText()).resolves.toBe('3');
    await expect(verdict.innerText()).resolves.not.toMatch(/no step there/);
    // Steps 4 and 5, past the other's end, compare nothing: not counted as differences (it read
    // "different action (no such step)" and "3 of 5 aligned steps differ").
    await expect(verdict.innerText()).resolves.toMatch(/\. 1 of 3 compared steps differs\./);
    // Said as a sentence, the side its subject (it read "not reached in broken run" beside the runs' headers).
    await expect(view.compareVerdict(4).innerText()).resolves.toBe('The other did not reach this step');
    await expect(view.compareVerdict(5).innerText()).resolves.toBe('The other did not reach this step');
    // The table's columns are "this" and "other": a file diff says so, never "only a".
    await expect(view.root.getByTestId('compare-table').innerText()).resolves.not.toMatch(/\(only [ab]\)/);
    await expect(view.root.getByTestId('compare-sides').innerText()).resolves.toMatch(
      /succeeded[\s\S]*⚑ step 3 Loop: /,
    );
    // Each side's state in the branch tree's words: main went on in the picked candidate, and
    // says so as in the tree (it read "interrupted continued in candidate", then "continued",
    // which read as a branch that went on).
    await expect(view.root.getByTestId('compare-status').allInnerTexts()).resolves.toEqual([
      'succeeded',
      'went on in a candidate',
    ]);
    // Each side names its return with the rounding every view uses (the tree and the list too).
    await expect(view.root.getByTestId('compare-sides').innerText()).resolves.toMatch(
      /return (-?\d+\.\d\d( \(γ=[\d.]+\))?|–) · final reward (-?\d+\.\d\d|–)/,
    );
    // A differing result says what differs, never a bare "different result".
    for (const cell of await view.root.locator('tr[data-verdict="different_result"] td.verdict').all())
      await expect(cell.innerText()).resolves.toMatch(/^different result: \S/);
    // The picked candidate succeeded, yet its final answer admits it could not start the app: its
    // card says so (the reward said success and nothing on screen said otherwise).
    await expect(view.root.getByTestId('compare-answer-admits').innerText()).resolves.toBe(
      '⚠ The verifier passed, but the final answer (step 5) says it did not finish.',
    );
    await roomy(app, 'compare-aligned-1920x1080', 'compare');
    for (const [width, height] of [
      [1280, 800],
      [1024, 700],
    ]) {
      await app.page.setViewportSize({ width, height });
      // Every heading is on one line ("other" once broke into "othe / r").
      const lines = await view.root.locator('[data-testid="compare-table"] th').evaluateAll((ths) =>
        ths.map((th) => {
          const range = document.createRange();
          range.selectNodeContents(th);
          return [
            th.textContent,
            new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size,
          ];
        }),
      );
      expect(lines, `${width}x${height}`).toEqual(lines.map(([text]) => [text, 1]));
    }
    await roomy(app, 'compare-aligned-1024x700', 'compare');
    // Escape gives the panes back.
    await app.page.keyboard.press('Escape');
    await view.root.waitFor({ state: 'detached' });
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('a fork that ends before the branch it is compared with: the sentence says so, no "show step 2" of a 1-step branch, and the step only the other took is "only the other", never "same"', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const view = app.sideBySide;
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await app.stepTo(1);
    await app.stepTo(2);
    const main = await app.stepper.branch();
    expect(main).not.toBe('');
    // Fork at step 1: the window is on the fork, which has step 1 only.
    await app.timeline.select(1);
    await app.replay.fork();
    const fork = await app.stepper.waitForBranchOtherThan(main);
    await app.settled({ timeoutMs: 90_000 });
    expect(await app.timeline.lastStep()).toBe(1);

    await view.openCompare();
    const verdict = await view.compareWith(main);
    await expect(verdict.innerText()).resolves.toBe(
      // The fork is live, paused at step 1: it has not ended there (it read "ends at step 1").
      'This branch has taken 1 step so far; the other goes on to step 2. The 1 compared step is the same.',
    );
    // The other's step 2 is one this live fork has not reached: no difference (it read "different action").
    await expect(view.compareVerdict(2).innerText()).resolves.toBe(
      'This branch has not reached this step yet',
    );
    // Nothing offers a step this branch does not have (it left the inspector on "step 2 is running").
    expect(await view.compareShowStep.count()).toBe(0);
    await expect(view.compareWorkspace(1).innerText()).resolves.toBe('same');
    await expect(view.compareWorkspace(2).innerText()).resolves.toBe('— only the other has this step');
    await expect(view.root.getByTestId('compare-files').innerText()).resolves.toMatch(
      /^Files that differ now: .*greet\.py/,
    );
    expect(await view.sidewaysScrolls()).toEqual([]);
    await app.screenshot('compare-fork-ends-first-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('compare-fork-ends-first-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await view.close();
    // The window still describes the fork's own last step.
    await expect(app.replay.root.getByTestId('scrub-label').innerText()).resolves.toBe('step 1 / 1');
    await app.inspector.waitForStep(1);

    // From the branch that goes on, its step 2 is there to show, and "show step 2" shows it.
    await app.timeline.branchNode(main).click();
    await app.stepper.waitForBranchOtherThan(fork);
    await app.timeline.waitForStep(2);
    await app.timeline.select(1);
    await view.openCompare();
    const back = await view.compareWith(fork ?? '');
    await expect(back.innerText()).resolves.toMatch(
      /^The other has taken 1 step so far; this branch goes on to step 2\. The 1 compared step is the same\.\s*show step 2$/,
    );
    await expect(view.compareVerdict(2).innerText()).resolves.toBe('The other has not reached this step yet');
    await expect(view.compareWorkspace(2).innerText()).resolves.toBe('— only this branch has this step');
    await view.compareShowStep.click();
    await expect(app.replay.root.getByTestId('scrub-label').innerText()).resolves.toBe('step 2 / 2');
    await app.inspector.waitForStep(2);
    await view.close();
    await app.screenshot('compare-show-step-2-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});
