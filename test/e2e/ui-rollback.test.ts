import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 19, item 2: a rollback a person can see. After "Roll back sandbox to here" on step
 * 1 of 3, steps 2 and 3 show as undone (kept in the trace), the inspector shows step 1, the
 * window says before Continue that the next step starts a new branch from step 1 and that
 * the old one stays as recorded, and the counts are true in the timeline, the scrubber
 * and the branch tree. Screenshots: `rollback-<what>-<size>.png`.
 */

async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ timeoutMs: 90_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step, 90_000);
  await app.settled({ timeoutMs: 90_000 });
}

async function undone(app: AppPage): Promise<number[]> {
  return app.timeline.root
    .locator('[data-testid="timeline-row"][data-undone="true"]')
    .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-step'))).sort((a, b) => a - b));
}

describe('web mode: rollback is visible', () => {
  const web = servedApp();

  it('undone steps show undone, the inspector stays on the step rolled back to, Continue says it starts a new branch, counts are true', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await stepTo(app, 1);
    await stepTo(app, 2);
    await stepTo(app, 3);
    const parent = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
    expect(parent).not.toBe('');

    await app.timeline.select(1);
    await app.replay.rollback();
    await app.settled({ timeoutMs: 90_000 });

    // Steps 2 and 3 are undone, step 1 is not; their status says so.
    await until(
      () => undone(app),
      (u) => u.join() === '2,3',
      30_000,
      'rows 2 and 3 undone',
    );
    await expect(app.timeline.row(3).getByTestId('row-status').innerText()).resolves.toBe('undone');
    await expect(app.timeline.row(1).getByTestId('row-status').innerText()).resolves.not.toBe('undone');
    // The inspector stays on the step the sandbox is at, not the last one.
    await app.inspector.waitForStep(1);
    // The terminal is the live one (the sandbox is at step 1), not a recording.
    await expect(app.terminal.mode()).resolves.toBe('live');
    // The counts: 1 step, 2 undone, in the timeline and under the scrubber.
    await expect(app.timeline.root.getByTestId('timeline-count').innerText()).resolves.toBe(
      '1 step · 2 undone',
    );
    await expect(app.replay.root.getByTestId('scrub-label').innerText()).resolves.toBe(
      'step 1 / 1 · 2 undone',
    );
    // Before Continue: what it will do, and what happens to this branch.
    const notice = app.stepper.stopReason;
    await expect(notice.innerText()).resolves.toBe(
      `Rolled back to step 1: steps 2–3 are undone in the sandbox (kept in this branch's trace). Step (F10) or Continue (F5) starts a new branch from step 1; ${parent} stays as recorded.`,
    );
    expect(await layout.readable(notice)).toBe(true);
    await expect(app.stepper.continueButton.getAttribute('title')).resolves.toContain(
      'starts a new branch from step 1',
    );
    await app.screenshot('rollback-undone-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    expect(await layout.readable(notice)).toBe(true);
    await app.screenshot('rollback-undone-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });

    // Continue: a new branch from step 1; the old one says it was rolled back and keeps its 3 steps.
    await app.page.keyboard.press('F10');
    await until(
      () => app.stepper.episodeId.getAttribute('data-id'),
      (id) => id !== null && id !== parent,
      60_000,
      'the new branch',
    );
    await app.timeline.waitForStep(2, 90_000);
    await app.settled({ timeoutMs: 90_000 });
    expect(await undone(app)).toEqual([]);
    const node = app.library.root.locator(`[data-testid="branch-node"][data-branch="${parent}"]`);
    await until(
      () => node.getAttribute('data-status'),
      (s) => s === 'rolled-back',
      30_000,
      'parent rolled back',
    );
    await expect(node.innerText()).resolves.toMatch(/rolled back to 1\s+3 steps/);
    await app.screenshot('rollback-continued-1024x700');

    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);

  it('a message injected and a command typed after step 1 are named by the notice of a rollback to 1: neither is carried into the new branch', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await stepTo(app, 1);
    await app.inject.inject('Also print the greeting twice.');
    // A command of the person's own in the sandbox, after snapshot 1; then out of the terminal.
    await app.terminal.waitForOpen();
    await app.terminal.run('echo typed-after-1 > by-hand.txt; echo TYPED-OK', /\nTYPED-OK/);
    await app.page.keyboard.press('Escape');
    await app.timeline.row(1).locator('.mark', { hasText: 'HUM' }).waitFor({ timeout: 30_000 });
    await stepTo(app, 2);
    await app.timeline.select(1);
    await app.replay.rollback();
    await app.settled({ timeoutMs: 90_000 });
    const notice = app.stepper.stopReason;
    await until(
      () => notice.innerText(),
      (t) => t.startsWith('Rolled back to step 1'),
      30_000,
      'the rollback notice',
    );
    await expect(notice.innerText()).resolves.toMatch(
      /stays as recorded\. The message injected after step 1 is not carried into the new branch: inject it again before you step if the agent should read it\. The commands typed in the terminal after step 1 are undone too: run them again if the next step needs them\.$/,
    );
    expect(await layout.readable(notice)).toBe(true);
    // Row 1's marks (INJ and HUM) are read whole in the narrow timeline, not cut to "INJ H…".
    expect(await layout.readable(app.timeline.row(1).locator('.tl-marks'))).toBe(true);
    await app.screenshot('rollback-injected-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    expect(await layout.readable(notice)).toBe(true);
    await app.screenshot('rollback-injected-1920x1080');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});
