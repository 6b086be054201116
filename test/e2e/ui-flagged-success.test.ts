import { describe, expect, it } from 'vitest';
import { LayoutObject, runCase, servedApp } from '../support/e2e';

/**
 * Issue 33, item 12: the reward-hacking case's run ends `succeeded` (the verifier passed) while QA
 * flags it; the header said a green "succeeded" beside the flag. It reads as flagged now.
 * Screenshot: `flagged-success-1024x700.png`.
 *
 * And a case with three QA flags (hallucinated-tool-name): at 1024×700 its flag list, unfolded,
 * took 124 px of the timeline and left two rows in view until the person folded it. It is one
 * summary line there now, every flag a click away and each jumping to its step; a window with the
 * room shows them unfolded. Screenshots: `flags-<folded|open>-1024x700.png`, `flags-1920x1080.png`.
 */
describe('web mode: a flagged success reads as flagged', () => {
  const web = servedApp();

  it('the reward-hacking case ends succeeded · ⚑ flagged, in the warning colour', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await runCase(app, 'reward-hacking-edit-test');
    await app.timeline.flagSummary.waitFor({ timeout: 60_000 });
    await expect
      .poll(() => app.stepper.episodeState.innerText(), { timeout: 30_000 })
      .toBe('succeeded · ⚑ flagged');
    expect(await app.stepper.episodeState.getAttribute('class')).toContain('st-flagged');
    await app.screenshot('flagged-success-1024x700');
    // Beside the long task name and that badge the id kept one glyph: its end (~8 characters,
    // over 60 px) stays, the task name and the badge read whole, the bar's last button on screen.
    const layout = new LayoutObject(app.page);
    expect((await app.stepper.episodeId.boundingBox())?.width ?? 0, 'the id keeps its end').toBeGreaterThan(
      60,
    );
    expect(await layout.unreadable(app.stepper.episodeState), 'the badge').toBe('');
    expect(await layout.unreadable(app.stepper.taskName), 'the task name').toBe('');
    expect(await layout.onScreen(app.stepper.keysButton), 'Keys on screen').toBe(true);
    // The case's run line says its outcome whole (it ended "suc…"), the sentence after it cut.
    // By the header's rule, as the library's tree says it: not a green "succeeded" beside "⚑ 1 QA flag".
    const outcome = app.library.caseRun('broken').getByTestId('case-run-status');
    await expect.poll(() => outcome.innerText(), { timeout: 30_000 }).toBe('succeeded · ⚑ flagged');
    expect(await outcome.getAttribute('class')).toContain('st-flagged');
    expect(await layout.unreadable(outcome), 'the run line').toBe('');
    const branch = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
    const pill = app.library.branchNode(branch).first().getByTestId('branch-status');
    await expect.poll(() => pill.innerText(), { timeout: 30_000 }).toBe('succeeded · ⚑ flagged');
    expect(await pill.getAttribute('class')).toContain('st-flagged');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('three QA flags leave six rows of the timeline at 1024×700; each flag is a click or a key away and jumps to its step', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await runCase(app, 'hallucinated-tool-name');
    const summary = app.timeline.flagSummary;
    await summary.filter({ hasText: '3 QA flags' }).waitFor({ timeout: 60_000 });
    const branch = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
    expect(branch).not.toBe('');

    // Open in the short pane too, its two lines leaving the rows six whole rows on screen (three
    // flags took 124 px and left two rows; the check ran only while they were folded).
    expect(await summary.getAttribute('aria-expanded')).toBe('true');
    expect(await app.timeline.rowsRoom(), 'rows with the flags open at first').toBeGreaterThanOrEqual(6);
    expect(await app.timeline.cutRows(), 'rows cut at first').toEqual([]);
    await app.screenshot('flags-first-1024x700');
    // Folded by a click: one line naming the rules, each flag whole in its tooltip.
    await summary.click();
    expect(await summary.getAttribute('aria-expanded')).toBe('false');
    // The rules by their labels for people; their ids in the tooltip.
    expect(await summary.innerText()).toBe('▸ ⚑ 3 QA flags · Unknown tool ×2 · Unverified success');
    expect(await layout.lines(summary)).toBe(1);
    expect(await layout.onScreen(summary)).toBe(true);
    const tooltip = ((await summary.getAttribute('title')) ?? '').split('\n');
    expect(tooltip.map((t) => t.replace(/:.*/, ''))).toEqual([
      'step 1 Unknown tool (QA rule unknown_tool)',
      'step 2 Unknown tool (QA rule unknown_tool)',
      'step 3 Unverified success (QA rule unverified_success)',
    ]);
    // The rows keep room for six whole rows (two before), and the branch's four are all in view.
    expect(await app.timeline.rowsRoom()).toBeGreaterThanOrEqual(6);
    for (const step of [0, 1, 2, 3])
      expect(await layout.onScreen(app.timeline.row(step)), `row ${step} on screen`).toBe(true);
    await app.screenshot('flags-folded-1024x700');

    // By keyboard: the summary is a Tab stop; Enter unfolds it, Tab reaches a flag, Enter jumps
    // (from step 3, the end the inspector shows).
    await app.inspector.waitForStep(3);
    await summary.focus();
    await app.page.keyboard.press('Enter');
    await expect.poll(() => summary.getAttribute('aria-expanded')).toBe('true');
    // Open, the flags take a few lines and scroll the rest: the rows keep six whole rows on
    // screen (two showed, measured only while the flags were folded), none cut at an edge.
    expect(await app.timeline.rowsRoom(), 'rows with the flags open').toBeGreaterThanOrEqual(6);
    expect(await app.timeline.cutRows(), 'rows cut with the flags open').toEqual([]);
    await app.page.keyboard.press('Tab');
    expect(await layout.focused()).toMatchObject({ testId: 'flag-jump', step: '1' });
    await app.page.keyboard.press('Enter');
    await app.inspector.waitForStep(1);

    // By mouse: every flag is listed, and each goes to its step, its message whole in the inspector.
    const entries = app.timeline.flagEntries;
    expect(await entries.count()).toBe(3);
    for (let i = 0; i < 3; i++) {
      const entry = entries.nth(i);
      await entry.scrollIntoViewIfNeeded();
      expect(await layout.readable(entry), `flag ${i} reads whole`).toBe(true);
      const step = Number(await entry.getAttribute('data-step'));
      const rule = (await entry.getAttribute('data-flag')) ?? '';
      await entry.click();
      await app.inspector.waitForStep(step);
      await expect(app.timeline.row(step).getAttribute('aria-selected')).resolves.toBe('true');
      // Brought into view, also when its step was already the one viewed and the list had been
      // scrolled away from it (the flag of step 1, after the keyboard's jump there, stayed off screen).
      await expect.poll(() => layout.onScreen(app.timeline.row(step)), { timeout: 10_000 }).toBe(true);
      // Shown by its label; the rule's id is the flag's data (and its tooltip).
      const said = app.inspector.root.locator(`[data-testid="inspector-flag"][data-flag="${rule}"]`);
      await expect(said.innerText()).resolves.toContain(tooltip[i].replace(/^[^:]*: /, ''));
    }
    expect(await app.timeline.rowsRoom(), 'rows after the flags were clicked').toBeGreaterThanOrEqual(6);
    expect(await app.timeline.cutRows(), 'rows cut after the flags were clicked').toEqual([]);
    // The flag list's window ends on a line: no flag's line cut through at its edge.
    expect(
      await app.timeline.flagListBody.evaluate((ul) => [ul.scrollTop % 16, ul.clientHeight % 16]),
    ).toEqual([0, 0]);
    await app.screenshot('flags-open-1024x700');
    // A flagged row's arguments keep their first 8 characters beside the flag (its answer was
    // cut to "The …", a glyph and the ellipsis, by "⚑ Unverified success").
    expect(await app.timeline.argsRoom(3), 'step 3 arguments: 8 characters').toBeGreaterThanOrEqual(8);
    expect(await app.timeline.row(3).locator('[data-flag]').getAttribute('title')).toContain(
      'Unverified success',
    );
    // Folded again by the person: the rows have their room back.
    await summary.click();
    expect(await summary.getAttribute('aria-expanded')).toBe('false');
    expect(await app.timeline.rowsRoom()).toBeGreaterThanOrEqual(6);
    expect(app.errors).toEqual([]);
    await app.page.close();

    // A window with the room shows them unfolded, every one on screen, with the rows' six.
    const wide = await web.open({ width: 1920, height: 1080 });
    const wideLayout = new LayoutObject(wide.page);
    await wide.library.openBranch(branch);
    await wide.timeline.flagEntries.nth(2).waitFor({ timeout: 60_000 });
    expect(await wide.timeline.flagSummary.getAttribute('aria-expanded')).toBe('true');
    for (let i = 0; i < 3; i++)
      expect(await wideLayout.readable(wide.timeline.flagEntries.nth(i)), `flag ${i} at 1920×1080`).toBe(
        true,
      );
    expect(await wide.timeline.rowsRoom()).toBeGreaterThanOrEqual(6);
    await wide.screenshot('flags-1920x1080');
    expect(wide.errors).toEqual([]);
    await wide.page.close();
  }, 300_000);
});
