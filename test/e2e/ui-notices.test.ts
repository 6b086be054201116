import { describe, expect, it } from 'vitest';
import { LayoutObject, runCase, servedApp, type AppPage } from '../support/e2e';

/**
 * Issue 33, item 1: messages (a share's file, a case saved, a save refused, an error) sit in one
 * notification area at the foot of the window, never over a control; each can be dismissed; they
 * are about the episode on screen and go when another is opened. At 1024×700 and 1280×800 the
 * centre of every visible, enabled button is hit by that button after each of them.
 * Screenshots: `notices-<what>-<size>.png`.
 */

/** Asserts that nothing lies over a button, after `what`. */
async function nothingCovered(app: AppPage, what: string): Promise<void> {
  expect(await new LayoutObject(app.page).coveredButtons(), `covered after ${what}`).toEqual([]);
}

describe('web mode: one notification area that never covers a control', () => {
  const web = servedApp();

  it('Share…, Save as case…, a refused save and an error leave every button reachable, at 1024×700 and 1280×800', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    // A case's broken run: flagged, so it can be saved as a case of one's own.
    await runCase(app, 'network-assumed');
    const first = (await app.stepper.episodeId.textContent()) ?? '';

    for (const size of [
      { width: 1024, height: 700 },
      { width: 1280, height: 800 },
    ]) {
      const tag = await app.resize(size);
      await nothingCovered(app, `ended (${tag})`);

      const downloading = app.page.waitForEvent('download');
      await app.timeline.shareButton.click();
      await downloading;
      await expect
        .poll(() => app.notices.ofKind('share').innerText())
        .toMatch(/KiB; your browser downloads a copy\): it opens offline/);
      await nothingCovered(app, `Share… (${tag})`);
      await app.screenshot(`notices-shared-${tag}`);

      // Save as case… is a dialog of its own: nothing behind it half-covered, its buttons reachable.
      const name = `notices-${size.width}`;
      await app.timeline.saveCaseButton.click();
      await app.timeline.saveCaseName.fill(name);
      await nothingCovered(app, `Save as case… open (${tag})`);
      await app.timeline.saveCaseSave.click();
      await expect.poll(() => app.notices.ofKind('save-case').innerText()).toContain(`Saved as case ${name}`);
      await expect(app.page.getByTestId('save-case-dialog').count()).resolves.toBe(0);
      await nothingCovered(app, `Save as case… saved (${tag})`);

      // The same name again is refused: said in the dialog (beside the name), in the bar once it closes, with
      // the way out the window has (Replace, or another name in the field that has the focus),
      // not the CLI's --force, and the case's folder named within the store, not by a host path.
      await app.timeline.saveCaseButton.click();
      await app.timeline.saveCaseName.fill(name);
      await app.timeline.saveCaseSave.click();
      await expect.poll(() => app.timeline.saveCaseRefused.innerText()).toMatch(/exists/);
      const refusal = await app.timeline.saveCaseRefused.innerText();
      expect(refusal).toContain(`cases/${name}`);
      expect(refusal).toMatch(/Press Replace to save this episode over it, or type another name/);
      expect(refusal).not.toMatch(/--force|\/tmp\/|stepbox-e2e/);
      expect(await app.page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
        'save-case-name',
      );
      await app.timeline.saveCaseReplace.waitFor();
      // Save would be refused again for this name: greyed, pointing at Replace.
      expect(await app.timeline.saveCaseSave.getAttribute('data-why')).toBe(
        `“${name}” is taken: press Replace to save this episode over it, or type another name.`,
      );
      // Said once while the dialog is open: not also in a red bar behind it.
      expect((await app.notices.items.allInnerTexts()).join('\n')).not.toMatch(/exists|Not saved/);
      await nothingCovered(app, `a refused save, dialog open (${tag})`);
      await app.screenshot(`notices-refused-dialog-${tag}`);
      // Another name is a new try: Replace was about the taken one.
      await app.timeline.saveCaseName.fill(`${name}-b`);
      await expect(app.timeline.saveCaseReplace.count()).resolves.toBe(0);
      await app.page.keyboard.press('Escape');
      await expect(app.page.getByTestId('save-case-dialog').count()).resolves.toBe(0);
      expect(await app.notices.ofKind('save-case').getAttribute('data-tone')).toBe('error');
      const bar = await app.notices.ofKind('save-case').innerText();
      // The bar offers the dialog's own way out (Replace), not another "Save as case… again".
      expect(bar).toMatch(
        /In the Save as case dialog, press Replace to save this episode over it, or type another name/,
      );
      expect(bar).not.toMatch(/again/);
      expect(bar).not.toMatch(/--force|\/tmp\/|stepbox-e2e/);
      await nothingCovered(app, `a refused save (${tag})`);

      // Replace saves over the taken name (the engine's force option): the case is saved.
      await app.timeline.saveCaseButton.click();
      await app.timeline.saveCaseName.fill(name);
      await app.timeline.saveCaseSave.click();
      await app.timeline.saveCaseReplace.click();
      await expect.poll(() => app.notices.ofKind('save-case').innerText()).toContain(`Saved as case ${name}`);
      await expect(app.page.getByTestId('save-case-dialog').count()).resolves.toBe(0);

      // Step on a recorded episode says what to do instead: a hint, not an error, covering nothing.
      await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await app.page.keyboard.press('F10');
      await expect
        .poll(() => app.stepper.hint.innerText())
        .toMatch(/^(This is a recorded trace\. )?To go on, press “Reopen live at step \d+”/);
      await expect(app.stepper.error.count()).resolves.toBe(0);
      await nothingCovered(app, `a hint (${tag})`);
      await app.screenshot(`notices-error-${tag}`);

      // Each message goes with its ×.
      const before = await app.notices.items.count();
      expect(before).toBe(2);
      await app.notices.items.first().getByTestId('notice-dismiss').click();
      await expect.poll(() => app.notices.items.count()).toBe(before - 1);
      await app.notices.items.first().getByTestId('notice-dismiss').click();
      await expect.poll(() => app.notices.items.count()).toBe(0);
    }

    // A message is about its episode: opening another clears it.
    await app.timeline.shareButton.click();
    await app.notices.ofKind('share').waitFor();
    await app.library.startTask('hello-python');
    await until(app, first);
    await expect.poll(() => app.notices.items.count()).toBe(0);
    await app.screenshot('notices-other-episode-1280x800');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});

/** Waits until the window shows a branch other than `left`. */
async function until(app: AppPage, left: string): Promise<void> {
  await expect
    .poll(
      async () => ((await app.stepper.episodeId.count()) ? await app.stepper.episodeId.textContent() : left),
      {
        timeout: 90_000,
      },
    )
    .not.toBe(left);
}
