import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp } from '../support/e2e';

/**
 * A new user's own world in web mode (Open… a project folder): what they found, held here.
 * The Open… dialog keeps the focus through Tab completion, starts empty after Cancel and names
 * the kinds the welcome names; a bare folder takes a Check beside its Goal (the CLI's --verify)
 * and succeeds by it; a new episode opens the inspector and Inject on their first tabs; a path
 * outside the allowed places is refused in one red block, and Choose… lists the opened project;
 * a folder that got a task.json in a shell starts as a task; Remove forgets a project, its
 * folder kept. Screenshots: `own-world-<what>-<size>.png`.
 */
describe('web mode: a project of ones own, from Open… to Remove', () => {
  const web = servedApp();
  let dir: string;
  let proj: string;
  let script: string;
  let outside: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-own-'));
    proj = join(dir, 'proj');
    mkdirSync(proj);
    writeFileSync(join(proj, 'notes.txt'), 'hello\n');
    // Outside every place a start reads from (the store, the bundled files, the opened projects).
    outside = join(dir, 'fix.jsonl');
    writeFileSync(outside, '');
    const scripts = join(web.home(), 'scripts');
    mkdirSync(scripts, { recursive: true });
    script = join(scripts, 'own-world.jsonl');
    writeFileSync(
      script,
      [
        JSON.stringify({
          role: 'assistant',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'execute_shell', arguments: JSON.stringify({ command: 'touch done.txt' }) },
            },
          ],
        }),
        JSON.stringify({ role: 'assistant', content: 'Done.' }),
      ].join('\n') + '\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('at 1024x700: Open… by Tab, Check beside Goal, first tabs per episode, one refusal, task init, Remove', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const { library, inspector, inject, page } = app;
    const layout = new LayoutObject(page);
    await library.waitForTasks();
    const welcome = await page.getByTestId('welcome').innerText();

    // Open…: Tab completes and the focus stays in the field, the caret at the end.
    await library.openButton.click();
    await library.openPath.fill(`${dir}/pr`);
    await library.openSuggestions.filter({ hasText: `${proj}/` }).waitFor();
    await page.keyboard.press('Tab');
    await expect.poll(() => library.openPath.inputValue()).toBe(`${proj}/`);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null)).toBe(
      'open-path',
    );
    await page.keyboard.type('zz');
    await expect(library.openPath.inputValue()).resolves.toBe(`${proj}/zz`);
    // The hint names the kinds the welcome names, in the same words.
    const hint = await library.openHint.innerText();
    expect(hint).toMatch(/Harbor task folder/);
    const kinds =
      /your own project folder \(a devcontainer one too\), a task\.json or a Harbor task folder/.exec(
        hint,
      )?.[0];
    expect(kinds && welcome.includes(kinds), `${hint} / ${welcome}`).toBe(true);
    await app.screenshot('own-world-open-dialog-1024x700');
    // Cancel, then Open… again: it starts empty, not on the path given up on.
    await page.getByTestId('open-dialog').getByRole('button', { name: 'Cancel' }).click();
    await library.openDialog.waitFor({ state: 'detached' });
    await library.openButton.click();
    await expect(library.openPath.inputValue()).resolves.toBe('');
    await page.keyboard.press('Escape');
    await library.openDialog.waitFor({ state: 'detached' });

    // A bare folder: Goal and Check (command); started with both, it succeeds by the check.
    await library.openProject(proj);
    await expect(library.projectPath(proj).innerText()).resolves.toBe('folder · proj');
    // The Goal is a few lines that grow with it, and both fields' hints read whole at 1024 px
    // ("what the agent should do h", "test -f out.txt (exit 0 =" were cut).
    const goal = library.projectGoal(proj);
    await expect(goal.evaluate((el) => el.tagName)).resolves.toBe('TEXTAREA');
    expect(await layout.fieldTextFits(goal), 'the Goal placeholder').toBe(true);
    expect(
      await layout.fieldTextFits(library.project(proj).getByTestId('project-check')),
      'the Check placeholder',
    ).toBe(true);
    await goal.fill('Read notes.txt and say whether to take an umbrella, then write the answer to out.txt');
    await expect(goal.evaluate((el) => el.scrollHeight <= el.clientHeight + 1)).resolves.toBe(true);
    await goal.fill('Create done.txt');
    await library.projectCheck(proj).fill('test -f done.txt');
    await library.agentField.fill(`scripted:${script}`);
    await library.project(proj).scrollIntoViewIfNeeded();
    expect(await layout.onScreen(library.projectCheck(proj))).toBe(true);
    await app.screenshot('own-world-goal-check-1024x700');
    await library.projectStart(proj).click();
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    // Tabs chosen in this episode: Output in the inspector, Override result in Inject.
    await inspector.tab('output');
    await inject.tab('override').click();
    await expect.poll(() => inject.selectedTab()).toBe('override');
    await page.keyboard.press('F5');
    await app.stepper.waitForState('ended', 120_000);
    await expect.poll(() => app.stepper.episodeState.innerText(), { timeout: 60_000 }).toBe('succeeded');

    // A new episode (a manual agent) opens on the first tabs: Call, and the Decision form.
    await library.agentField.fill('manual');
    await library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    await expect.poll(() => inspector.selectedTab()).toBe('call');
    await expect.poll(() => inject.selectedTab()).toBe('decide');
    await app.screenshot('own-world-new-episode-tabs-1024x700');

    // A path outside the allowed places: refused once, in one red block.
    await library.agentField.fill(`scripted:${outside}`);
    await library.project(proj).scrollIntoViewIfNeeded();
    await library.projectStart(proj).click();
    await expect.poll(() => library.startFieldError.innerText()).toMatch(/outside the folders/);
    expect(await library.errorBlocks(/outside the folders stepbox reads files from/).count()).toBe(1);
    await app.screenshot('own-world-refused-once-1024x700');
    // Choose… offers the opened project's folder, a place the refusal names.
    await page.getByTestId('pick-agent').click();
    const select = library.filePicker.getByTestId('picker-task');
    await select.selectOption(proj);
    await library.filePicker.getByText('notes.txt').waitFor();
    await app.screenshot('own-world-picker-project-1024x700');
    await page.keyboard.press('Escape');
    await library.filePicker.waitFor({ state: 'detached' });

    // In a shell the folder becomes a task (task init): its card reads it again and starts it.
    execFileSync(
      process.execPath,
      [
        resolve('bin/stepbox.js'),
        'task',
        'init',
        proj,
        '--goal',
        'Create done.txt',
        '--verify',
        'test -f done.txt',
      ],
      { env: { ...process.env, STEPBOX_HOME: web.home() }, stdio: 'pipe' },
    );
    await library.agentField.fill(`scripted:${script}`);
    await library.project(proj).hover();
    await expect.poll(() => library.projectPath(proj).innerText()).toBe('task.json · proj');
    expect(await library.projectGoal(proj).count()).toBe(0);
    const before = await app.stepper.episodeId.innerText();
    await library.projectStart(proj).click();
    // The live manual episode is left: stopped for this start when the window asks.
    await expect
      .poll(
        async () => {
          if (await app.stepper.stopQuestionStop.isVisible()) await app.stepper.stopQuestionStop.click();
          return app.stepper.episodeId.innerText();
        },
        { timeout: 120_000 },
      )
      .not.toBe(before);
    await app.settled({ timeoutMs: 120_000 });
    expect(await app.stepper.taskName.innerText()).toBe('proj');
    expect(await library.errorBlocks(/--goal|Goal/).count()).toBe(0);

    // Remove, by the keyboard: the project leaves the list; its folder stays.
    await library.projectRemove(proj).focus();
    await page.keyboard.press('Enter');
    await library.project(proj).waitFor({ state: 'detached' });
    expect(existsSync(join(proj, 'notes.txt'))).toBe(true);
    await page.reload();
    await app.waitForReady();
    await library.waitForTasks();
    expect(await library.project(proj).count()).toBe(0);
    expect(app.errors).toEqual([]);
    await page.close();
  }, 600_000);

  it('at 1920x1080: a bare folder shows Goal and Check, with Start and Remove', async () => {
    const other = join(dir, 'other');
    mkdirSync(other);
    const app = await web.open({ width: 1920, height: 1080 });
    const { library } = app;
    const layout = new LayoutObject(app.page);
    await library.waitForTasks();
    await library.openProject(other);
    await library.project(other).scrollIntoViewIfNeeded();
    for (const control of [
      library.projectGoal(other),
      library.projectCheck(other),
      library.projectStart(other),
      library.projectRemove(other),
    ])
      expect(await layout.onScreen(control)).toBe(true);
    await app.screenshot('own-world-card-1920x1080');
    await library.openButton.click();
    await library.openPath.fill(`${dir}/ot`);
    await library.openSuggestions.filter({ hasText: `${other}/` }).waitFor();
    await app.screenshot('own-world-open-dialog-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
