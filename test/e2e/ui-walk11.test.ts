import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * A new user's walk of the window at 1024×700 (walk 11): the held step's editor, Replay after a
 * rollback, a duration's value and unit, and Tab in Open…. Screenshots: `walk11-<what>-<size>.png`.
 */

const SMALL = { width: 1024, height: 700 } as const;
const LARGE = { width: 1920, height: 1080 } as const;

/** Starts hello-python (its bundled scripted agent) and takes `steps` steps, at rest after each. */
async function startHello(app: AppPage, steps = 0): Promise<void> {
  await app.library.startTask('hello-python');
  await app.stepper.waitForBranch(90_000);
  await app.settled({ timeoutMs: 90_000 });
  for (let s = 1; s <= steps; s++) await app.stepTo(s);
}

describe('web mode: walk 11 at 1024×700', () => {
  const web = servedApp();
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the held step’s argument editor shows at least 4 lines above its Save and run row, and again once a refusal grows that row', async () => {
    const app = await web.open(SMALL);
    const layout = new LayoutObject(app.page);
    await startHello(app);
    await app.stepper.stopBeforeTool.check();
    await app.page.keyboard.press('F10');
    const card = await app.held.waitBeforeTool(1);
    await card.editArguments();
    await expect(card.editor.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    // It showed ~1.5 lines: focus scrolled it to the pane's edge, under the pinned buttons.
    expect(await layout.shownLines(card.editor), 'editor lines shown on opening').toBeGreaterThanOrEqual(4);
    expect(await layout.notWhollyInView(card.actions), 'Save and run row').toBe('');
    await app.screenshot('walk11-held-editor-1024x700');

    // Arguments the tool refuses: the refusal grows the pinned row; the editor still shows 4 lines.
    await card.saveAndRun('{"path": ".", "bogus": 1, "also": "an argument list_dir does not take"}');
    await card.error.waitFor({ timeout: 10_000 });
    await app.screenshot('walk11-held-editor-refused-1024x700');
    expect(await layout.readable(card.error)).toBe(true);
    expect(await layout.shownLines(card.editor), 'editor lines shown under a refusal').toBeGreaterThanOrEqual(
      4,
    );
    expect(await layout.notWhollyInView(card.actions), 'Save and run row under a refusal').toBe('');
    await app.resize(LARGE);
    expect(await layout.shownLines(card.editor)).toBeGreaterThanOrEqual(4);
    expect(await layout.notWhollyInView(card.actions)).toBe('');
    await app.screenshot('walk11-held-editor-refused-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 240_000);

  it('after a rollback, Roll back and Fork are on screen beside its notice', async () => {
    const app = await web.open(SMALL);
    const layout = new LayoutObject(app.page);
    await startHello(app, 2);
    // The lower panes a little shorter than they open: Replay's rows of buttons, its notice and
    // "What if…" no longer fit the room the terminal left it (the walk's pane scrolled too, its
    // scrollbar taking the width "Fork settings…" needed: four rows).
    await layout.drag('split-bottom', 0, 40);
    const parent = await app.stepper.branch();
    await app.timeline.select(1);
    await app.replay.rollback();
    await app.stepper.waitForBranchOtherThan(parent);
    await app.settled({ timeoutMs: 90_000 });
    await app.replay.notice.waitFor({ timeout: 30_000 });
    // What a person does next: roll back again or fork here. Both were scrolled above the pane's
    // top edge, the notice and "What if…" brought into view under the rows of buttons.
    const controls = [app.replay.root.getByTestId('rollback'), app.replay.root.getByTestId('fork')];
    for (const size of [SMALL, LARGE]) {
      const tag = await app.resize(size);
      for (const c of controls)
        expect(await layout.onScreen(c), `${await c.innerText()} at ${tag}`).toBe(true);
      expect(await layout.readable(app.replay.notice), `notice at ${tag}`).toBe(true);
      expect(await layout.slivers(app.replay.body), `slivers at ${tag}`).toEqual([]);
      await app.screenshot(`walk11-rolled-back-${tag}`);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('a call’s duration and size never break between value and unit, at any window width', async () => {
    const app = await web.open(SMALL);
    const layout = new LayoutObject(app.page);
    await startHello(app, 2);
    await app.timeline.select(2);
    await app.inspector.waitForStep(2);
    await app.inspector.tab('call');
    const duration = app.inspector.duration;
    await expect(duration.innerText()).resolves.toMatch(/^\d/);
    // The facts flow on lines: across widths the line ends fall everywhere along them ("7.9 / ms").
    const broken: string[] = [];
    for (let width = 1024; width <= 1400; width += 2) {
      await app.resize({ width, height: 700 });
      for (const fact of [duration, app.inspector.bytes])
        if ((await layout.lines(fact)) > 1) broken.push(`${width}: ${await fact.innerText()}`);
    }
    expect(broken).toEqual([]);
    for (const size of [SMALL, LARGE]) await app.screenshot(`walk11-duration-${await app.resize(size)}`);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 240_000);

  it('Tab in Open…’s path fills in what the matches share and stays; Tab again moves on; the key sheet says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-tab-'));
    dirs.push(dir);
    for (const name of ['proj-bb', 'proj-dc', 'proj-py']) mkdirSync(join(dir, name));
    const app = await web.open(SMALL);
    const { library } = app;
    await library.openButton.scrollIntoViewIfNeeded();
    await library.openButton.click();
    await library.openPath.fill(`${dir}/pr`);
    await until(
      () => library.openSuggestions.count(),
      (n) => n === 3,
      10_000,
      'three completions',
    );
    const inField = () => library.openPath.evaluate((el) => el === document.activeElement);
    await app.page.keyboard.press('Tab');
    // Shell-like: the shared part, the focus still in the field (it went into the list).
    await expect.poll(() => library.openPath.inputValue()).toBe(`${dir}/proj-`);
    await expect(inField()).resolves.toBe(true);
    await app.screenshot('walk11-open-tab-1024x700');
    // Typed on: the one match is completed whole, a folder going on to its entries.
    await app.page.keyboard.type('p');
    await until(
      () => library.openSuggestions.allInnerTexts(),
      (s) => s.length === 1 && s[0] === `${dir}/proj-py/`,
      10_000,
      'the one completion',
    );
    await app.page.keyboard.press('Tab');
    await expect.poll(() => library.openPath.inputValue()).toBe(`${dir}/proj-py/`);
    await expect(inField()).resolves.toBe(true);
    // Nothing more to fill in (an empty folder): Tab moves on.
    await until(
      () => library.openSuggestions.count(),
      (n) => n === 0,
      10_000,
      'no completions in the empty folder',
    );
    await app.page.keyboard.press('Tab');
    await expect(inField()).resolves.toBe(false);
    await app.resize(LARGE);
    await app.screenshot('walk11-open-tab-1920x1080');
    await app.page.getByTestId('open-dialog').getByRole('button', { name: 'Cancel' }).click();
    await library.openDialog.waitFor({ state: 'detached' });

    // The key sheet lists it.
    await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await app.page.keyboard.press('?');
    await app.keySheet.waitFor();
    await expect(app.keySheet.innerText()).resolves.toMatch(
      /Open…\s+Tab\s+in the path: fill in what the matches share/i,
    );
    await app.screenshot('walk11-key-sheet-1920x1080');
    await app.resize(SMALL);
    expect(await new LayoutObject(app.page).readable(app.keySheet.getByText('Tab', { exact: true }))).toBe(
      true,
    );
    await app.screenshot('walk11-key-sheet-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 120_000);
});
