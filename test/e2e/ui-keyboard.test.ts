import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 19, item 1: the keyboard is never trapped. A person who uses only the keyboard
 * starts a task from the search box, Tabs through the whole window past the terminal
 * (Tab never reaches bash: no "Display all … possibilities?"), enters the terminal on
 * purpose with Enter, leaves it with Escape, and reaches the main actions with one key
 * each, listed in the "?" sheet. Screenshots: `keyboard-<what>-<size>.png`.
 */

async function focusedIn(
  app: AppPage,
): Promise<{ panel: string | null; tag: string; testId: string | null }> {
  return new LayoutObject(app.page).focused();
}

describe('web mode: the keyboard is never trapped', () => {
  const web = servedApp();

  it('Enter in the search goes to the item the search names, not to one that only mentions it', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const keys = app.page.keyboard;
    await keys.press('/');
    // "notes" names the task notes-memory; the destructive case only mentions notes in its summary.
    await keys.type('notes');
    await app.library.root.locator('[data-testid="library-task"][data-task="notes-memory"]').waitFor();
    await app.library.root
      .locator('[data-testid="library-case"][data-case="destructive-clean-start"]')
      .waitFor();
    await keys.press('Enter');
    const focused = await app.page.evaluate(() => ({
      task: document.activeElement?.getAttribute('data-task') ?? null,
      case: document.activeElement?.getAttribute('data-case') ?? null,
    }));
    expect(focused).toEqual({ task: 'notes-memory', case: null });
    const layout = new LayoutObject(app.page);
    expect(await layout.onScreen(layout.focusedElement)).toBe(true);
    // The Agent field's hint is one line until asked (its whole list pushed the tasks out of sight).
    const hint = app.library.root.getByTestId('library-agent-hint');
    const closed = (await hint.boundingBox())?.height ?? Infinity;
    expect(closed, 'the hint takes two lines at most until opened').toBeLessThan(40);
    await hint.locator('summary').click();
    await expect(hint.innerText()).resolves.toContain('sandbox:COMMAND (run inside the sandbox)');
    await app.screenshot('keyboard-agent-hint-open-1024x700');
    await app.screenshot('keyboard-search-names-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 120_000);

  it('starts a task from the keyboard, Tabs past the terminal, enters it on purpose, and reaches the main actions by key', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const keys = app.page.keyboard;

    // "/" goes to the search; typing filters; Enter goes to the first match; Enter starts it.
    await keys.press('/');
    expect((await focusedIn(app)).testId).toBe('library-search');
    await keys.type('hello-py');
    await app.library.root.locator('[data-testid="library-task"][data-task="hello-python"]').waitFor();
    await keys.press('Enter');
    expect((await focusedIn(app)).testId).toBe('library-task');
    await keys.press('Enter');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    const mode = app.terminal.root.getByTestId('terminal-mode');
    await mode.filter({ hasText: 'open' }).waitFor({ timeout: 90_000 });
    await app.settled({ timeoutMs: 90_000 });
    await expect(mode.innerText()).resolves.toBe('open · Enter or click to type');
    // Started from the keyboard, the focus is on Step (it fell to the page, and Tab began at the top).
    await until(
      async () => (await focusedIn(app)).testId,
      (t) => t === 'btn-step',
      10_000,
      'the focus on Step',
    );

    // Tab and Shift+Tab walk the whole window and never land in the shell.
    let inShell = 0;
    let onBox = 0;
    for (const key of ['Tab', 'Shift+Tab']) {
      for (let i = 0; i < 120; i++) {
        await keys.press(key);
        const f = await focusedIn(app);
        if (f.panel === 'terminal' && f.tag === 'textarea') inShell++;
        if (f.testId === 'terminal-live') onBox++;
      }
    }
    expect(inShell, 'Tab never enters the shell by itself').toBe(0);
    expect(onBox, 'the terminal is one Tab stop').toBeGreaterThan(0);
    expect(await app.terminal.screen()).not.toMatch(/possibilities/);

    // On the terminal's box the window says how to enter; Enter enters, Tab then completes in bash.
    await app.terminal.root.getByTestId('terminal-live').focus();
    await expect(mode.innerText()).resolves.toBe('open · Enter or click to type');
    await app.screenshot('keyboard-terminal-box-1024x700');
    await keys.press('Enter');
    await until(
      () => mode.innerText(),
      (t) => t.includes('typing in the shell'),
      5_000,
      'typing',
    );
    await expect(mode.innerText()).resolves.toBe('open · typing in the shell · Esc leaves');
    await keys.type('echo KEYBOARD-IN');
    await keys.press('Enter');
    await until(
      () => app.terminal.screen(),
      (t) => t.includes('KEYBOARD-IN\n'),
      20_000,
      'echo',
    );
    expect((await focusedIn(app)).panel).toBe('terminal');
    // Escape leaves: the next Tab goes on.
    await keys.press('Escape');
    await until(
      () => focusedIn(app),
      (f) => f.panel !== 'terminal',
      5_000,
      'left the terminal',
    );
    await expect(mode.innerText()).resolves.toBe('open · Enter or click to type');
    // To the next region's control, not a resize handle between panes (issue 33, item 10).
    expect(await app.page.evaluate(() => document.activeElement?.getAttribute('role') ?? '')).not.toBe(
      'separator',
    );

    // "?" shows every key; Escape closes it.
    await keys.press('?');
    const sheet = app.keySheet;
    await sheet.waitFor();
    const sheetText = await sheet.innerText();
    for (const line of [
      'search the cases',
      'run the held step',
      'edit the held step',
      'inject a message',
      'roll the sandbox back',
      'fork a new branch',
      'leave the terminal',
      'save the edit and run it',
      'Pause before tools',
    ])
      expect(sheetText).toContain(line);
    expect(await new LayoutObject(app.page).readable(sheet)).toBe(true);
    await app.screenshot('keyboard-sheet-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('keyboard-sheet-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await keys.press('Escape');
    await expect(sheet.count()).resolves.toBe(0);

    // E edits the held step's arguments: pause before tools (its key, P), F10 decides, E opens the editor.
    await keys.press('p');
    await expect(app.stepper.stopBeforeTool.isChecked()).resolves.toBe(true);
    await keys.press('F10');
    await app.held.root.waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 60_000 });
    await keys.press('e');
    await until(
      () => focusedIn(app),
      (f) => f.testId === 'held-editor',
      5_000,
      'the arguments editor',
    );
    await expect(app.held.editor.inputValue()).resolves.toContain('"path"');
    await app.screenshot('keyboard-edit-arguments-1024x700');
    await keys.press('Escape');
    await keys.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled({ timeoutMs: 60_000 });
    await app.stepper.stopBeforeTool.uncheck();

    // I goes to the injection text; typing there is text, not keys.
    await keys.press('i');
    await until(
      () => focusedIn(app),
      (f) => f.testId === 'inject-text',
      5_000,
      'the inject field',
    );
    await keys.type('bf');
    await expect(app.inject.root.getByTestId('inject-text').inputValue()).resolves.toBe('bf');
    await app.inject.root.getByTestId('inject-text').fill('');
    await keys.press('Escape');

    // T types in the terminal straight away; B rolls back to the viewed step.
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await keys.press('t');
    await until(
      () => mode.innerText(),
      (t) => t.includes('typing in the shell'),
      5_000,
      'typing via T',
    );
    await keys.press('Escape');
    await until(
      () => focusedIn(app),
      (f) => f.panel !== 'terminal',
      5_000,
      'left the terminal',
    );
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await keys.press('b');
    await app.replay.root
      .getByTestId('replay-notice')
      .filter({ hasText: 'rolled back' })
      .waitFor({ timeout: 60_000 });

    await keys.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
