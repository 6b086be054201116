import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, type AppPage } from '../support/e2e';

/**
 * Issue 19, item 7: a control that cannot act now is disabled and says why, in a line of its own
 * on screen (never a title: a native tooltip said it twice) and to a screen reader (its
 * `aria-description`): Inject while a step is paused
 * before its tools, Fork and Roll back on a step that has not run, the pause switches and
 * Step on a recorded episode. Screenshots: `disabled-why-<what>-<size>.png`.
 */

/** A control's state as a person and a screen reader get it. */
async function why(
  app: AppPage,
  testId: string,
): Promise<{ disabled: boolean; title: string; described: string }> {
  const el = app.page.getByTestId(testId).first();
  return {
    disabled: await el.isDisabled(),
    title: (await el.getAttribute('title')) ?? '',
    described: (await el.getAttribute('aria-description')) ?? '',
  };
}

describe('web mode: controls that cannot act say why', () => {
  const web = servedApp();

  it('with nothing open, the pause switches can be set and act from the first step of the episode started next', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const toggle = await why(app, 'stop-before-tool');
    expect(toggle.disabled).toBe(false);
    expect(toggle.described).toBe('from the first step of the next episode you start, reopen or fork');
    await app.stepper.stopBeforeTool.check();
    await app.screenshot('pause-switch-before-start-1024x700');
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(90_000);
    await app.settled({ timeoutMs: 90_000 });
    // Set before Start: the first step stops before its tool, as if set after.
    expect(await app.stepper.stopBeforeTool.isChecked()).toBe(true);
    await app.page.keyboard.press('F10');
    await app.held.waitFor('before_tool');
    expect((await why(app, 'stop-before-tool')).described).toBe('');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('Inject, Fork, Roll back and Step are disabled with their reason when they cannot act; the pause switches act on the next live episode', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    // Nothing open: Step says where to start.
    const none = await why(app, 'btn-step');
    expect(none.disabled).toBe(true);
    expect(none.described).toMatch(/^No episode is open: start a case or a sample task/);

    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(90_000);
    await app.settled({ timeoutMs: 90_000 });
    // Before the first step the timeline shows step 0, the setup: Replay does not say the
    // episode has "no step" beside it.
    await app.timeline.waitForStep(0, 60_000);
    await expect(app.replay.text()).resolves.toMatch(
      /Nothing to scrub yet: the episode has only step 0, its setup\. Take one \(Step, F10\)/,
    );
    await app.stepper.stopBeforeTool.check();
    await app.page.keyboard.press('F10');
    await app.held.waitFor('before_tool');
    await app.settled({ timeoutMs: 60_000 });

    // Paused before step 1's tools: a message cannot go in now; the button says so before the click.
    await app.inject.tab('message').click();
    await app.inject.messageField.fill('the user wants an umbrella');
    const inject = await why(app, 'inject-send');
    expect(inject.disabled).toBe(true);
    expect(inject.described).toMatch(
      /^Step 1 is paused inside: a message goes in between steps\. Run it \(F10\) first/,
    );
    // No title: the line under it says the reason, and a native tooltip said it again over the line.
    expect(inject.title).toBe('');
    // Typed, the message cannot go in: the reason is on screen under the button without a
    // hover or focus (it was only in the bubble), and the button names that line first.
    await expect(app.inject.sendWhy.innerText()).resolves.toBe(inject.described);
    expect(await new LayoutObject(app.page).readable(app.inject.sendWhy)).toBe(true);
    await expect(app.inject.root.getByTestId('inject-send').getAttribute('aria-describedby')).resolves.toBe(
      'inject-send-why',
    );
    // The waiting step has no snapshot: fork and rollback say which step to use instead, in one
    // reason for both.
    await app.timeline.select(1);
    const held =
      'Step 1 has not run yet (it waits in the inspector): roll back or fork from step 0, or run it first.';
    for (const id of ['fork', 'rollback']) {
      const w = await why(app, id);
      expect(w.disabled, id).toBe(true);
      expect(w.described, id).toBe(held);
    }
    // Said on screen without a focus or a pointer (a person with a mouse saw nothing: the reason
    // was in the bubble on focus alone), once, in a line under both, which both name first; the
    // pointer on either brings no bubble over Try candidates and Inject's field.
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const layout = new LayoutObject(app.page);
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1920, height: 1080 },
    ]) {
      const at = await app.resize(size);
      await expect(app.replay.branchWhy.innerText()).resolves.toBe(held);
      expect(await layout.readable(app.replay.branchWhy), at).toBe(true);
      for (const id of ['fork', 'rollback']) {
        const button = app.replay.root.getByTestId(id);
        await expect(button.getAttribute('aria-describedby')).resolves.toBe('replay-branch-why');
        await button.hover();
        expect(await layout.overlappedControls(app.replay.branchWhy), `${id} ${at}`).toEqual([]);
      }
      await expect(app.page.getByText(held, { exact: true }).count()).resolves.toBe(1);
      // Save as case… (the episode is live) says why in a line at the top of the timeline while
      // pointed at, covering nothing: its bubble lay over the timeline's filter row.
      await app.timeline.saveCaseButton.hover();
      const saveWhy = (await app.timeline.saveCaseButton.getAttribute('data-why')) ?? '';
      expect(saveWhy).toMatch(/^Stop the episode first/);
      await expect(app.timeline.saveCaseWhy.innerText()).resolves.toBe(saveWhy);
      expect(await layout.readable(app.timeline.saveCaseWhy), at).toBe(true);
      expect(await layout.overlappedControls(app.timeline.saveCaseWhy), at).toEqual([]);
      await app.screenshot(`disabled-why-save-case-pointed-${at}`);
      await app.page.mouse.move(0, size.height - 1);
      await expect(app.timeline.saveCaseWhy.isVisible()).resolves.toBe(false);
    }
    await app.resize({ width: 1024, height: 700 });
    // The F key on the disabled Fork says the same in the status notice.
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await app.page.keyboard.press('f');
    await expect(app.stepper.hint.innerText()).resolves.toMatch(/Step 1 has not run yet/);
    await app.screenshot('disabled-why-held-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('disabled-why-held-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });

    // Once the step ran, both act.
    await app.stepper.stopBeforeTool.uncheck();
    await app.page.keyboard.press('F10');
    await app.timeline.row(1).locator('[data-status="ok"]').or(app.timeline.row(1)).first().waitFor();
    await app.settled({ timeoutMs: 60_000 });
    await app.held.waitGone();
    await app.timeline.select(1);
    expect((await why(app, 'inject-send')).disabled).toBe(false);
    expect((await why(app, 'fork')).disabled).toBe(false);
    expect((await why(app, 'rollback')).disabled).toBe(false);

    // Ended: Step says the episode has ended and the way on; the pause switches still take a click, for the
    // next live episode (a new user lost half a minute when they were disabled here). Stopped
    // with the focus on Step, which can act until then: disabled under the focus, it says why at
    // once (it said nothing until the focus moved away and back).
    // Reached by Tab, as a keyboard user does (a button clicked with the pointer keeps the focus
    // too, and says nothing there: its end would cover the bar's "succeeded").
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const active = () => app.page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null);
    for (let i = 0; i < 40 && (await active()) !== 'btn-step'; i++) await app.page.keyboard.press('Tab');
    expect(await active()).toBe('btn-step');
    await expect(layout.whySaid.count()).resolves.toBe(0);
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended');
    await expect(app.page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).resolves.toBe(
      'btn-step',
    );
    await expect
      .poll(() => layout.whySaid.innerText())
      .toMatch(/^This episode has ended\. To go on, press “Reopen live at step \d+”/);
    const toggle = await why(app, 'stop-before-tool');
    expect(toggle.disabled).toBe(false);
    expect(toggle.described).toBe('from the first step of the next episode you start, reopen or fork');
    await app.stepper.stopBeforeTool.check();
    await expect(app.stepper.stopBeforeTool.isChecked()).resolves.toBe(true);
    expect((await why(app, 'btn-step')).described).toMatch(
      /^This episode has ended\. To go on, press “Reopen live at step \d+” or “Fork at step \d+” under Replay\.$/,
    );
    expect(await new LayoutObject(app.page).onScreen(app.stepper.stopBeforeTool)).toBe(true);
    await app.screenshot('disabled-why-recorded-1024x700');
    // Set on the recorded episode, the switch holds the first step of a fork from it.
    await app.timeline.select(1);
    await app.replay.fork();
    await app.settled({ timeoutMs: 90_000 });
    expect(await app.stepper.stopBeforeTool.isChecked()).toBe(true);
    await app.page.keyboard.press('F10');
    await app.held.waitFor('before_tool');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('every disabled button says why in a line of its own, covering nothing, in each state a person meets: nothing open, live paused, ended, a recorded trace (issue 33, item 2)', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    // Each disabled button on screen, pointed at and focused, at both sizes: its reason in its
    // line, whole, over no other control (Step, Pause, Stop, the scrubber's arrows, Re-execute,
    // the held card's buttons said it in a floating bubble over the panes' headers and buttons).
    const walk = async (state: string, shown: { readonly testId: string; readonly says: RegExp }) => {
      for (const size of [
        { width: 1024, height: 700 },
        { width: 1920, height: 1080 },
      ]) {
        const at = await app.resize(size);
        expect(await layout.unexplainedDisabled(), `${state} ${at}`).toEqual([]);
        // Every visible name holds its visible words (at 1920 the Keys button shows "Keys ?").
        expect(await layout.namesWithoutTheirText(), `${state} ${at}`).toEqual([]);
        // One of them pointed at for the screenshot: its reason where the person looks.
        const button = app.page.getByTestId(shown.testId).first();
        await button.hover();
        const line = layout.whySaid;
        await expect(line.innerText(), `${state} ${at}`).resolves.toMatch(shown.says);
        expect(await layout.unreadable(line), `${state} ${at}`).toBe('');
        expect(await layout.overlappedControls(line), `${state} ${at}`).toEqual([]);
        await app.screenshot(`disabled-why-${state}-${at}`);
        await app.page.mouse.move(0, 0);
      }
      await app.resize({ width: 1024, height: 700 });
    };
    await app.library.waitForTasks();
    await walk('nothing-open', {
      testId: 'btn-step',
      says: /^No episode is open: start a case or a sample task/,
    });

    // Live, paused before step 1's tools (the held card's buttons, Inject, Fork, Roll back).
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(90_000);
    await app.settled({ timeoutMs: 90_000 });
    await app.stepper.stopBeforeTool.check();
    await app.page.keyboard.press('F10');
    await app.held.waitFor('before_tool');
    await app.settled({ timeoutMs: 60_000 });
    await app.timeline.select(1);
    await walk('live-paused', { testId: 'btn-pause', says: /^Nothing is running to pause\.$/ });

    // Ended: a recorded episode's Step, Pause, Stop, Roll back.
    await app.stepper.stopBeforeTool.uncheck();
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended');
    await app.settled({ ended: true });
    await walk('ended', { testId: 'btn-step', says: /^This episode has ended\. To go on, press/ });
    await app.resize({ width: 1280, height: 800 });
    expect(await layout.unexplainedDisabled(), 'ended at 1280x800').toEqual([]);
    await app.resize({ width: 1024, height: 700 });

    // A recorded trace opened from the library in a new window session, at its first step.
    const branch = await app.stepper.branch();
    await app.page.reload();
    await app.waitForReady();
    await app.library.openBranch(branch);
    await app.settled({ ended: true });
    await app.timeline.select(0);
    await walk('recorded', {
      testId: 'btn-stop',
      says: /^This episode is not running: there is nothing to stop\.$/,
    });
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
  it('a reason pointed at covers nothing: Compare broken vs fixed says why under itself (issue 33)', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const walkthrough = app.library.walkthrough;
    await app.library.openCase('reward-hacking-edit-test');
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 90_000 });
    const compare = walkthrough.getByTestId('case-compare');
    const reason = (await compare.getAttribute('data-why')) ?? '';
    expect(reason).toMatch(/the comparison needs both runs/);
    const line = walkthrough.locator('#case-compare-why');
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1920, height: 1080 },
    ]) {
      const at = await app.resize(size);
      // Not said at rest (the walkthrough keeps its room); pointed at, under it, in the flow: its
      // bubble lay over the runs' lines and the walkthrough's text.
      await expect(line.isVisible()).resolves.toBe(false);
      await compare.hover();
      await expect(line.innerText()).resolves.toBe(reason);
      expect(await layout.readable(line), at).toBe(true);
      expect(await layout.overlappedControls(line), at).toEqual([]);
      expect(await layout.coveredButtons(), at).toEqual([]);
      await app.screenshot(`disabled-why-case-compare-pointed-${at}`);
      // Focused (keys), the same line.
      await app.page.mouse.move(size.width - 1, size.height - 1);
      await compare.focus();
      await expect(line.innerText()).resolves.toBe(reason);
      await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await expect(line.isVisible()).resolves.toBe(false);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
