import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp } from '../support/e2e';

/**
 * Issue 19, item 4: the start form never shows a host file's content. A model source
 * typed as `scripted:../../…/etc/passwd` is resolved from the task's folder (the one
 * documented place), the card says which file the start will read before the click, and
 * the error after it names the file and line, never what the file holds. Messages use the
 * form's field names, not the CLI's flags. Screenshots: `start-form-<what>-<size>.png`.
 */
describe('web mode: the start form reads no host file into view', () => {
  const web = servedApp();

  it('a model source outside the task is shown resolved before the start, and its error shows no content', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.root.getByTestId('library-agent').fill('exec:python3 agent.py');
    const model = app.library.root.getByTestId('library-model');
    await model.fill('scripted:../../../../../../../../../../etc/passwd');
    const card = app.library.root.locator('[data-testid="library-task"][data-task="hello-python"]');
    // Before the start: the start's own refusal (the one rule, shared/start-paths.ts), not "reads
    // /etc/passwd" as if it would: the field, where it lands, the folders in words, the fix. Every
    // card would say the same, so it is said once, under the field (it repeated under each card,
    // naming "the store $STEPBOX_HOME, stepbox's bundled files resources").
    const refusal = app.library.startRefusalForAll;
    const said = await refusal.innerText();
    expect(said).toMatch(
      /^Its model calls answered by: scripted:…\/\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd resolves to \/etc\/passwd, which is outside the folders stepbox reads files from \(the task's folder, the store, stepbox's bundled files\); pick the file with Choose… → Your folders to let stepbox read it, or give a path inside one of them$/,
    );
    await expect(app.library.root.getByTestId('start-refusal').count()).resolves.toBe(0);
    await expect(card.getByTestId('start-reads').count()).resolves.toBe(0);
    // No host layout on screen; the folders' paths are the tooltip.
    for (const host of [process.cwd(), web.home()]) expect(said).not.toContain(host);
    await expect(refusal.locator('span').getAttribute('title')).resolves.toContain(
      `stepbox's bundled files: ${process.cwd()}/resources`,
    );
    await refusal.scrollIntoViewIfNeeded();
    expect(await layout.readable(refusal)).toBe(true);
    await app.screenshot('start-form-reads-1024x700');

    await app.library.startTask('hello-python');
    // Said under the field it names ("Its model calls answered by"), the field to fix.
    const fieldError = app.library.startFieldError;
    await fieldError.waitFor({ timeout: 60_000 });
    const text = await fieldError.innerText();
    // `..` out of the task's folder is refused before the start, in the words the card said.
    expect(text).toBe(said);
    expect(text).not.toMatch(/root|bash|nologin|x:0/);
    // A relative script resolves from the task's folder, as the hint says.
    await model.fill('scripted:agent.jsonl');
    const reads = card.getByTestId('start-reads');
    await expect(reads.innerText()).resolves.toBe('reads hello-python/agent.jsonl');
    await expect(reads.getAttribute('title')).resolves.toMatch(
      /^\/.*\/resources\/tasks\/hello-python\/agent\.jsonl$/,
    );
    // The form's words, not the CLI's: a bad agent is "Agent", not "agent spec".
    await app.library.root.getByTestId('library-agent').fill('scripted:');
    await app.library.startTask('hello-python');
    // Under the field it names, the field to fix (it was under the card clicked).
    const error = app.library.startFieldError;
    await error.filter({ hasText: 'Agent' }).waitFor({ timeout: 30_000 });
    await expect(app.library.startError('hello-python').count()).resolves.toBe(0);
    const agentField = await app.library.root.getByTestId('library-agent').boundingBox();
    const errorBox = await error.boundingBox();
    expect(errorBox!.y).toBeGreaterThan(agentField!.y);
    expect(errorBox!.y - (agentField!.y + agentField!.height)).toBeLessThan(80);
    // One sentence, what is wrong and the fix; the twelve lines of accepted forms folded under
    // Details (they stood in its place).
    await expect(error.innerText()).resolves.toBe(
      '“Agent” "scripted:" needs a file after the colon: scripted:FILE.\nDetails: every form it accepts',
    );
    const forms = error.getByTestId('error-forms');
    await expect(forms.evaluate((d) => (d as HTMLDetailsElement).open)).resolves.toBe(false);
    await expect(forms.textContent()).resolves.toContain('scripted:FILE, replay:EPISODE, openai:MODEL@URL');
    const bad = (await forms.textContent()) ?? '';
    expect(bad).not.toMatch(/agent spec|--model|--agent/);
    await app.screenshot('start-form-error-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('start-form-error-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 200_000);

  it('at 1024×700 a file picker chooses the agent script from the task’s folder (or the store), and the card says what it reads', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const lib = app.library.root;
    await lib.locator('[data-testid="library-task"][data-task="hello-python"]').waitFor({ timeout: 30_000 });
    await lib.getByTestId('pick-agent').click();
    const picker = app.library.filePicker;
    await picker.waitFor({ timeout: 10_000 });
    await picker.getByTestId('picker-task').selectOption('hello-python');
    await picker
      .locator('[data-testid="picker-path"]', { hasText: /resources\/tasks\/hello-python$/ })
      .waitFor({
        timeout: 20_000,
      });
    const entry = picker.locator('[data-testid="picker-entry"][data-name="agent.jsonl"]');
    await entry.waitFor({ timeout: 20_000 });
    expect(await layout.onScreen(picker)).toBe(true);
    expect(await layout.readable(entry)).toBe(true);
    // No ".." above the task's folder: the root has no way up.
    await expect(picker.getByTestId('picker-up').count()).resolves.toBe(0);
    await app.screenshot('start-form-picker-1024x700');
    // The store is another root (Your folders, the third, is ui-choose-own-file's).
    await picker.getByTestId('picker-root-store').click();
    await picker.locator('[data-testid="picker-path"]', { hasText: web.home() }).waitFor({ timeout: 20_000 });
    await picker.getByTestId('picker-root-task').click();
    await entry.waitFor({ timeout: 20_000 });
    // A primary Choose, then Cancel, after the help text (it had only Cancel, between the list
    // and its help): a click picks a file out, Choose takes it.
    await expect(app.library.pickerActions()).resolves.toEqual({
      buttons: ['Choose', 'Cancel'],
      afterHelp: true,
    });
    await expect(picker.getByTestId('picker-choose').getAttribute('aria-disabled')).resolves.toBe('true');
    await entry.click();
    await expect(entry.getAttribute('aria-selected')).resolves.toBe('true');
    await expect(picker.isVisible()).resolves.toBe(true);
    await app.screenshot('start-form-picker-selected-1024x700');
    await picker.getByTestId('picker-choose').click();
    await picker.waitFor({ state: 'detached', timeout: 10_000 });
    // The field holds the path as the form resolves it (from the task's folder); the card says the file.
    await expect(lib.getByTestId('library-agent').inputValue()).resolves.toBe('scripted:agent.jsonl');
    // From the keyboard, Enter on an entry takes it at once.
    await lib.getByTestId('library-agent').fill('');
    await lib.getByTestId('pick-agent').click();
    await picker.getByTestId('picker-task').selectOption('hello-python');
    await entry.waitFor({ timeout: 20_000 });
    await entry.focus();
    await app.page.keyboard.press('Enter');
    await picker.waitFor({ state: 'detached', timeout: 10_000 });
    await expect(lib.getByTestId('library-agent').inputValue()).resolves.toBe('scripted:agent.jsonl');
    // The field reads whole at 1024 px (its Choose… goes under it when the pane is narrow).
    expect(await lib.getByTestId('library-agent').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(
      true,
    );
    const card = lib.locator('[data-testid="library-task"][data-task="hello-python"]');
    // Said from the task's folder, the host's whole path on hover.
    await expect(card.getByTestId('start-reads').innerText()).resolves.toBe('reads hello-python/agent.jsonl');
    await expect(card.getByTestId('start-reads').getAttribute('title')).resolves.toMatch(
      /^\/.*\/resources\/tasks\/hello-python\/agent\.jsonl$/,
    );
    await card.scrollIntoViewIfNeeded();
    expect(await layout.readable(card.getByTestId('start-reads'))).toBe(true);
    await app.screenshot('start-form-picked-1024x700');
    await app.library.startTask('hello-python');
    await app.settled({ timeoutMs: 90_000 });
    await expect(app.stepper.taskName.getAttribute('title')).resolves.toMatch(/hello/);
    // The header's title takes the bar's free width: whole at 1024 and 1280, not "hell…".
    for (const [width, height] of [
      [1024, 700],
      [1280, 800],
    ] as const) {
      await app.page.setViewportSize({ width, height });
      await app.screenshot(`start-form-header-${width}x${height}`);
      const cut = await app.stepper.taskName.evaluate((el) => el.scrollWidth > el.clientWidth);
      expect(cut, `the task name is cut at ${width}×${height}`).toBe(false);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 200_000);
});
