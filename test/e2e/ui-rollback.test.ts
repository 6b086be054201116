import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 19, item 2 and issue 33, item 3: a rollback a person can see, at once. After "Roll back
 * sandbox to here" on step 1 of 3 — before any Step — the window is on the branch the rollback
 * made: its id, "paused at step 1", its steps up to 1, a notice saying where steps 2–3 went (the
 * branch rolled back keeps them, marked so in the branch tree) and what Step does, the branch tree
 * with the new branch current under its parent at fork@1, and a live terminal. Screenshots:
 * `rollback-<what>-<size>.png`.
 */
/**
 * The Replay pane under its notice: the "What if…" line is whole in the pane's view or scrolled
 * wholly out of it, and no other control shows as a strip at either edge (at 1024×700 the line
 * was cut in half at the pane's bottom edge).
 */
async function nothingSliced(app: AppPage, layout: LayoutObject): Promise<void> {
  await app.replay.root.getByTestId('whatif').waitFor({ timeout: 30_000 });
  expect(['whole', 'away']).toContain(await layout.bandFit(app.replay.body, app.replay.whatIfLine));
  expect(await layout.slivers(app.replay.body)).toEqual([]);
}

describe('web mode: rollback is visible', () => {
  const web = servedApp();

  it('right after the click the window is on the new branch, paused at step 1, under its parent rolled back to 1; Step goes on there', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await app.stepTo(1);
    await app.stepTo(2);
    await app.stepTo(3);
    const parent = await app.stepper.branch();
    expect(parent).not.toBe('');

    // Step 0 is the setup: nothing to try candidates for (it offered "Try candidates for step 0…").
    await app.timeline.select(0);
    const candidates = app.replay.root.getByTestId('candidates-open');
    await expect(candidates.innerText()).resolves.toBe('Try candidates for a step…');
    await expect(candidates.getAttribute('data-why')).resolves.toBe(
      'Step 0 is the setup: the agent made no call there to try others for. Select step 1 or later.',
    );
    await app.timeline.select(1);
    await app.replay.rollback();
    // What a person sees with no Step taken: the new branch, paused at step 1.
    const branch = await app.stepper.waitForBranchOtherThan(parent);
    await until(
      () => app.stepper.episodeState.innerText(),
      (t) => t === 'paused at step 1',
      30_000,
      '"paused at step 1"',
    );
    await app.settled({ timeoutMs: 90_000 });
    const notice = app.stepper.stopReason;
    await until(
      () => notice.innerText({ timeout: 5_000 }).catch(() => '(no notice)'),
      (t) => t.startsWith('Rolled back to step 1'),
      30_000,
      'the rollback notice',
    );
    expect(await notice.innerText()).toBe(
      // The parent by its name in the tree, not its id; once, in a few lines (it was 10 at 1024×700).
      'Rolled back to step 1: a new live branch from main, paused at step 1. Steps 2–3 are undone here; main keeps them. Step (F10) or Continue (F5) to go on.',
    );
    expect(await layout.readable(notice)).toBe(true);
    // Its steps are 0..1: the undone ones are the parent's, not rows of this branch.
    expect(await app.timeline.lastStep()).toBe(1);
    await expect(app.timeline.root.getByTestId('timeline-count').innerText()).resolves.toBe('1 step');
    await expect(app.replay.root.getByTestId('scrub-label').innerText()).resolves.toBe('step 1 / 1');
    await app.inspector.waitForStep(1);
    // The tree: the new branch current, under its parent at fork@1; the parent rolled back to 1, 3 steps.
    const tree = app.timeline.root.getByTestId('branch-tree');
    const node = tree.locator(`[data-testid="branch-node"][data-branch="${branch}"]`);
    await node.waitFor({ timeout: 30_000 });
    expect(await node.getAttribute('class')).toContain('current');
    await expect(app.timeline.branchName(branch).innerText()).resolves.toBe('fork@1');
    expect(
      await tree
        .locator(`li:has(> [data-branch="${parent}"]) [data-testid="branch-node"][data-branch="${branch}"]`)
        .count(),
    ).toBe(1);
    const parentNode = tree.locator(`[data-testid="branch-node"][data-branch="${parent}"]`);
    expect(await parentNode.getAttribute('data-status')).toBe('rolled-back');
    expect(await parentNode.innerText()).toMatch(/rolled back to 1\s+3 steps/);
    expect(await layout.unreadable(parentNode)).toBe('');
    // The terminal is the live one (the sandbox is at step 1), not a recording.
    await until(
      () => app.terminal.mode(),
      (m) => m === 'live',
      60_000,
      'a live terminal',
    );
    await nothingSliced(app, layout);
    expect(await layout.readable(app.replay.root.getByTestId('replay-notice'))).toBe(true);
    await app.screenshot('rollback-at-once-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    expect(await layout.readable(notice)).toBe(true);
    await nothingSliced(app, layout);
    await app.screenshot('rollback-at-once-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });

    // Step: it goes on in that branch (no other branch is made), and the notice has done its work.
    await app.stepTo(2);
    expect(await app.stepper.episodeId.getAttribute('data-id')).toBe(branch);
    expect(await tree.locator('[data-testid="branch-node"]').count()).toBe(2);
    // The tree above the timeline says what the library's tree says of the branch just stepped:
    // 2 steps and its return now (it kept "1 step · return 0.10" under the count's "2 steps").
    await expect(app.timeline.stepCount.innerText()).resolves.toBe('2 steps');
    const figures = async (n: Locator) =>
      `${await n.locator('.muted').first().innerText()} · ${await n.getByTestId('branch-return').innerText()}`;
    const [inTimeline, inLibrary] = [
      app.timeline.branchNode(branch ?? ''),
      app.library.branchNode(branch ?? ''),
    ];
    await until(
      async () => [await figures(inTimeline), await figures(inLibrary)],
      ([t, l]) => t === l && t.startsWith('2 steps'),
      30_000,
      'the same figures in both trees',
    );
    await until(
      () => notice.innerText({ timeout: 1_000 }).catch(() => ''),
      (t) => !t.startsWith('Rolled back'),
      30_000,
      'the rollback notice gone after a step',
    );
    await app.screenshot('rollback-continued-1024x700');

    // A disabled Roll back's reason, said while it has the focus, goes when the state changes
    // under it: in CI its bubble kept "The episode is running: pause it first." beside the
    // bar's "paused", over Fork. Held before step 3's tools, it cannot act; run, it can.
    await app.stepper.stopBeforeTool.check();
    await app.page.keyboard.press('F10');
    await app.held.waitFor('before_tool');
    const rollback = app.replay.root.getByTestId('rollback');
    // Said in the line under Roll back and Fork (on screen without focus), or the bubble.
    const said = new LayoutObject(app.page).whySaid;
    // Off again first: the switch would take the focus from Roll back.
    await app.stepper.stopBeforeTool.uncheck();
    await app.held.waitFor('before_tool');
    await rollback.focus();
    await expect(app.replay.branchWhy.innerText()).resolves.toMatch(/^Step 3 has not run yet/);
    await app.page.keyboard.press('F10');
    await until(
      async () => [
        await rollback.getAttribute('aria-disabled'),
        (await said.isVisible()) || (await app.replay.branchWhy.isVisible()),
      ],
      ([disabled, shown]) => disabled === null && shown === false,
      60_000,
      'Roll back able to act once step 3 ran, and no reason said for it',
    );
    expect(await app.page.locator(':focus').getAttribute('data-testid')).toBe('rollback');
    expect(await app.stepper.episodeState.innerText()).toBe('paused');
    await app.settled({ timeoutMs: 60_000 });
    await app.screenshot('rollback-continued-step3-1024x700');

    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);

  it('the notice of a rollback to 1 names every message, override and command it dropped, by count and step; the old branch marks step 2 as rolled back after it, not mid-step', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await app.stepTo(1);
    await app.inject.inject('Also print the greeting twice.');
    // A command of the person's own in the sandbox, after snapshot 1; then out of the terminal.
    await app.terminal.waitForOpen();
    await app.terminal.run('echo typed-after-1 > by-hand.txt; echo TYPED-OK', /\nTYPED-OK/);
    await app.page.keyboard.press('Escape');
    await app.timeline.row(1).locator('.mark', { hasText: 'HUM' }).waitFor({ timeout: 30_000 });
    // Row 1's marks (INJ and HUM) are read whole in the narrow timeline, not cut to "INJ H…".
    expect(await layout.readable(app.timeline.row(1).locator('.tl-marks'))).toBe(true);
    await app.stepTo(2);
    // After step 2 (undone by the rollback to 1): a message and an override of its result.
    await app.inject.inject('Keep the file short.');
    await app.inject.override('OVERRIDDEN-2');
    const parent = await app.stepper.branch();
    await app.timeline.select(1);
    await app.replay.rollback();
    const made = await app.stepper.waitForBranchOtherThan(parent);
    await app.settled({ timeoutMs: 90_000 });
    const notice = app.stepper.stopReason;
    await until(
      () => notice.innerText({ timeout: 5_000 }).catch(() => '(no notice)'),
      (t) => t.startsWith('Rolled back to step 1'),
      30_000,
      'the rollback notice',
    );
    // Every one, the message after step 2 and the override too (the notice named only a message
    // after step 1 itself); counted, by step.
    await expect(notice.innerText()).resolves.toMatch(
      /to go on\. Dropped: 2 messages injected after steps 1, 2; 1 overridden result of step 2; 1 command typed after step 1\. Redo what the next step needs\.$/,
    );
    expect(await layout.readable(notice)).toBe(true);
    // Said in a few lines at 1024×700 (it ran 9): the how and why wait behind "Details", closed.
    const lines = await notice.evaluate((el) =>
      Math.round(el.clientHeight / parseFloat(getComputedStyle(el).lineHeight)),
    );
    // Six with all three kinds dropped (messages, an override, a command), each by step.
    expect(lines, 'lines of the rollback notice at 1024×700').toBeLessThanOrEqual(6);
    const details = app.page.getByTestId('rollback-details');
    await expect(details.getAttribute('open')).resolves.toBeNull();
    await details.locator('summary').click();
    await expect(details.innerText()).resolves.toContain(
      'Recorded after snapshot 1, which this branch starts from, so not in it: 2 messages injected after steps 1, 2; 1 overridden result of step 2; 1 command typed after step 1.',
    );
    await details.locator('summary').click();
    // The terminal went on into the new branch: below the command typed after step 1, a mark
    // says that what ran there is undone (its rows joined: the narrow terminal wraps the mark).
    await until(
      async () => (await app.terminal.lines()).join(''),
      (t) => /TYPED-OK.*── rolled back to step 1: what ran above since is undone ──/.test(t),
      10_000,
      "the rollback's mark in the terminal, below the typed command",
    );
    // The new branch's row 1 ends at snapshot 1: neither the message nor the command is on it.
    expect(
      await app.timeline
        .row(1)
        .locator('.mark', { hasText: /INJ|HUM/ })
        .count(),
    ).toBe(0);
    await nothingSliced(app, layout);
    await app.screenshot('rollback-injected-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    expect(await layout.readable(notice)).toBe(true);
    await nothingSliced(app, layout);
    await app.screenshot('rollback-injected-1920x1080');
    // The branch left: its step 2 finished before the rollback, so its mark says where it went
    // back to, not "workspace restored mid-step".
    await app.timeline.branchNode(parent).click();
    const mark = app.timeline.row(2).getByTestId('row-rolled-back');
    await mark.waitFor({ timeout: 30_000 });
    await expect(mark.getAttribute('aria-label')).resolves.toBe(
      'ROLLBACK: rolled back to step 1 after this step',
    );
    await expect(app.timeline.markLegend.innerText()).resolves.toContain(
      'sandbox rolled back after the step',
    );
    await expect(app.timeline.markLegend.innerText()).resolves.not.toContain('mid-step');
    await app.screenshot('rollback-old-branch-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await app.screenshot('rollback-old-branch-1024x700');
    // Back on the live branch to stop it.
    await app.timeline.branchNode(made).click();
    await app.stepper.waitForState('paused', 30_000);
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});
