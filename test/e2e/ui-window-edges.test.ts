import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { continueToNextHold, LayoutObject, servedApp } from '../support/e2e';

/**
 * The window's rough edges left from walk 12, each seen where a person sees it: a sample's ▶
 * after a project started with a script, a project's Start that would be refused, a held final
 * answer said twice, Open…'s "Tab completes.", the breakpoints band's last row, an Inject draft
 * lost on a reload, and task cards that did not say what the task asks.
 * Screenshots: `window-edges-<what>-<size>.png`.
 */
const base = mkdtempSync(join(tmpdir(), 'stepbox-edges-e2e-'));
const GOAL =
  'Read the notes in notes.txt, work out which of the three weather stations reported the coldest night of the week, and write its name alone on the first line of done.txt; then stop.';
const solved = (() => {
  const dir = join(base, 'solved');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'task.json'),
    JSON.stringify({ name: 'solved', goal: GOAL, verifier: { command: 'test -f done.txt' } }),
  );
  return join(dir, 'task.json');
})();
const HARBOR = resolve('test/fixtures/harbor/dataset/hello-file');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('web mode: the window’s edges after walk 12', () => {
  const web = servedApp();

  it('task cards say what they ask; after a project starts with an agent, another’s Start is greyed with why and a sample’s ▶ runs its own', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const { library } = app;
    await library.waitForTasks();
    // Open…: what Tab does in the path, as the key sheet says it.
    await library.openButton.click();
    await expect(library.openHint.innerText()).resolves.toContain(
      'Tab: fill in what the matches share (their longest common start); again: move on.',
    );
    expect(await layout.onScreen(library.openHint)).toBe(true);
    await app.screenshot('window-edges-open-hint-1024x700');
    await app.page.getByRole('button', { name: 'Cancel' }).click();
    for (const p of [solved, HARBOR]) await library.openProject(p);
    // Opened under the list, its card is brought into view (it was listed out of sight).
    expect(await layout.onScreen(library.projectStart(HARBOR))).toBe(true);

    // Each task card says its goal: two lines at most, cut with an ellipsis, whole on hover and focus.
    const goal = library.project(solved).getByTestId('project-task-goal');
    const harborGoal = library.project(HARBOR).getByTestId('project-task-goal');
    await expect(harborGoal.innerText()).resolves.toBe(
      'Create a file `/workspace/hello.txt` whose only line is `Hello, Harbor!`.',
    );
    await expect(goal.getAttribute('title')).resolves.toBe(GOAL);
    const lines = () =>
      goal.evaluate((el) => ({
        lines: Math.round(el.clientHeight / parseFloat(getComputedStyle(el).lineHeight)),
        cut: el.scrollHeight > el.clientHeight + 1,
      }));
    await expect(lines()).resolves.toEqual({ lines: 2, cut: true });
    await goal.focus();
    await expect(lines()).resolves.toMatchObject({ cut: false });
    await harborGoal.scrollIntoViewIfNeeded();
    expect(await layout.unreadable(harborGoal)).toBe('');
    await goal.blur();
    await library.project(solved).scrollIntoViewIfNeeded();
    await app.screenshot('window-edges-task-goal-1024x700');

    // A project started with an agent typed for it.
    await library.agentField.fill('manual');
    await expect.poll(() => library.projectAgent(HARBOR).innerText()).toBe('with manual');
    await library.projectStart(solved).click();
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    // The other project's Start is greyed, its reason beside it and linked to it.
    const start = library.projectStart(HARBOR);
    const why = library.projectAgent(HARBOR);
    await expect.poll(() => start.getAttribute('aria-disabled')).toBe('true');
    await expect(why.innerText()).resolves.toBe('no agent yet: Agent holds solved’s; type or choose one');
    expect(((await start.getAttribute('aria-describedby')) ?? '').split(' ')).toContain(
      await why.getAttribute('id'),
    );
    await library.project(HARBOR).scrollIntoViewIfNeeded();
    expect(await layout.unreadable(why)).toBe('');
    await app.screenshot('window-edges-start-greyed-1024x700');
    // Clicked anyway: nothing starts (the same episode stays on screen).
    const before = await app.stepper.branch();
    await start.click({ force: true });
    await expect(app.stepper.branch()).resolves.toBe(before);

    // The sample tasks say which agent their ▶ runs, and hello-python's runs its own (no decision asked).
    const own = library.root.getByTestId('start-agent-own-all');
    await expect(own.innerText()).resolves.toBe('each ▶ runs the task’s own agent: Agent holds solved’s');
    await own.scrollIntoViewIfNeeded();
    expect(await layout.unreadable(own)).toBe('');
    await app.screenshot('window-edges-sample-own-agent-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    await app.screenshot('window-edges-sample-own-agent-1920x1080');
    await library.startTask('hello-python');
    await app.stepper.waitForBranchOtherThan(before, 120_000);
    // Started with its own agent: the Agent field, another start's, is emptied with its episode gone.
    await expect.poll(() => library.agentField.inputValue()).toBe('');
    await app.settled({ timeoutMs: 120_000 });
    await expect(app.inject.selectedTab()).resolves.toBe('message');
    await app.stepTo(1, 90_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);

  it('a held final answer is said once; an Inject draft comes back after a reload on its branch only', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    await app.stepper.stopBeforeAnswer.check();
    let finalHeld = false;
    let was = '';
    for (let i = 0; i < 12 && !finalHeld; i++) {
      const h = await continueToNextHold(app, was);
      if (h === null) break;
      was = h;
      finalHeld = (await app.held.root.getByTestId('held-final').count()) > 0;
    }
    expect(finalHeld).toBe(true);
    const final = await app.held.root.getByTestId('held-final').locator('q').innerText();
    expect(final.length).toBeGreaterThan(0);
    // Its text once on the card, not under "The model says" and again under "wants to finish with".
    await expect(app.held.root.getByTestId('held-content').count()).resolves.toBe(0);
    const card = await app.held.root.innerText();
    expect(card.split(final).length - 1).toBe(1);
    await app.screenshot('window-edges-final-once-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    await app.screenshot('window-edges-final-once-1920x1080');
    await app.resize({ width: 1024, height: 700 });

    // A draft typed in the Inject box survives a reload of the window, on its branch.
    const branch = await app.stepper.branch();
    await app.inject.tab('message').click();
    await app.inject.messageField.fill('check the answer against notes.txt');
    await app.page.reload();
    await app.waitForReady();
    await expect.poll(() => app.stepper.branch(), { timeout: 30_000 }).toBe(branch);
    await app.settled({ timeoutMs: 60_000 });
    await app.inject.tab('message').click();
    await expect(app.inject.messageField.inputValue()).resolves.toBe('check the answer against notes.txt');
    await app.screenshot('window-edges-draft-kept-1024x700');
    // Another episode: its box is empty, the draft not carried into it.
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranchOtherThan(branch, 120_000);
    await app.settled({ timeoutMs: 120_000 });
    await app.inject.tab('message').click();
    await expect(app.inject.messageField.inputValue()).resolves.toBe('');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);

  it('the breakpoints band scrolls to its last breakpoint whole at 1024×700', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    const kinds: [string, string?][] = [
      ['step', '7'],
      ['tool', 'execute_shell'],
      ['tool_error'],
      ['nonzero_exit'],
      ['timeout'],
      ['fallback'],
      ['null_value'],
      ['slow_step', '5000'],
      ['qa'],
    ];
    for (const [kind, value] of kinds) await app.breakpoints.add(kind, value);
    const items = app.breakpoints.root.getByTestId('breakpoint-item');
    await expect(items.count()).resolves.toBe(kinds.length);
    const body = app.breakpoints.root.locator('.panel-body');
    // Scrolled as a person does, a wheel turn at a time, each row comes whole into view on the way down.
    const last = items.last();
    await body.hover();
    await body.evaluate((el) => el.scrollTo(0, 0));
    let whole = false;
    for (let i = 0; i < 30 && !whole; i++) {
      await app.page.mouse.wheel(0, 40);
      whole = (await layout.notWhollyInView(last)) === '';
    }
    expect(await layout.notWhollyInView(last)).toBe('');
    await app.screenshot('window-edges-breakpoints-last-1024x700');
    // Tabbed to, its ✕ brings the whole row into view, not the button alone.
    await body.evaluate((el) => el.scrollTo(0, 0));
    await last.getByRole('button').focus();
    expect(await layout.notWhollyInView(last)).toBe('');
    await app.resize({ width: 1920, height: 1080 });
    expect(await layout.notWhollyInView(last)).toBe('');
    await app.screenshot('window-edges-breakpoints-last-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
