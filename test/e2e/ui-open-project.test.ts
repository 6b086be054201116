import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store';
import { LayoutObject, servedApp } from '../support/e2e';
import { writeSampleEpisode } from '../support/traces';

/**
 * Issue 30, item 6 (and issue 33's "build them together"): Open… in the library takes a bare
 * project folder by its path — typed with completion in web mode — and lists it with a Goal
 * field; started with a scripted agent it steps like any task, its files the workspace. The
 * project stays listed after a reload. At 1280×800 and 1024×700.
 * Screenshots: `open-project-<what>-<size>.png`.
 */
describe('web mode: Open… a project folder, give it a goal, start it and step it', () => {
  const web = servedApp();
  let dir: string;
  let project: string;
  let script: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-open-'));
    project = join(dir, 'weather-notes');
    mkdirSync(project);
    writeFileSync(join(project, 'notes.txt'), 'Beijing: rain tomorrow\n');
    writeFileSync(join(project, 'README.md'), '# my project\n');
    // The agent's answers: in the store, a place the path rule reads from.
    const scripts = join(web.home(), 'scripts');
    mkdirSync(scripts, { recursive: true });
    script = join(scripts, 'open-project.jsonl');
    const call = (id: string, command: string) =>
      JSON.stringify({
        role: 'assistant',
        tool_calls: [
          {
            id,
            type: 'function',
            function: { name: 'execute_shell', arguments: JSON.stringify({ command }) },
          },
        ],
      });
    writeFileSync(
      script,
      [
        call('call_1', 'cat notes.txt'),
        call('call_2', 'ls'),
        JSON.stringify({ role: 'assistant', content: 'It rains: take an umbrella.' }),
      ].join('\n') + '\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a Harbor task folder's instruction.md is step 0's goal: plain text (its HTML inert), folded to a few lines with more", async () => {
    const harbor = join(dir, 'harbor-report');
    mkdirSync(join(harbor, 'environment'), { recursive: true });
    mkdirSync(join(harbor, 'tests'));
    writeFileSync(
      join(harbor, 'task.toml'),
      'version = "1.0"\n[agent]\ntimeout_sec = 120\n[environment]\ndocker_image = "stepbox-sandbox:2"\n',
    );
    writeFileSync(join(harbor, 'tests', 'test.sh'), '#!/bin/sh\ntest -f /app/report.txt\n');
    // Untrusted Markdown: a heading, emphasis, raw HTML whose handler would mark the page.
    const instruction = [
      '# Write the report',
      '',
      '<img src=x onerror="document.body.dataset.pwned=1">',
      '',
      'Write **report.txt** listing the files of /app, one per line.',
      ...Array.from({ length: 14 }, (_, i) => `- rule ${i + 1}: keep line ${i + 1} as it is`),
      'LAST LINE OF THE INSTRUCTION',
    ].join('\n');
    writeFileSync(join(harbor, 'instruction.md'), instruction + '\n');
    const app = await web.open({ width: 1024, height: 700 });
    const { library, inspector } = app;
    const layout = new LayoutObject(app.page);
    await library.waitForTasks();
    await library.openButton.scrollIntoViewIfNeeded();
    await library.openButton.click();
    await library.openPath.fill(harbor);
    await app.page.getByTestId('open-submit').click();
    await library.openDialog.waitFor({ state: 'detached' });
    const item = library.project(harbor);
    await item.waitFor();
    await library.agentField.fill(`scripted:${script}`);
    await item.getByTestId('project-start').click();
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    // Started, it waits at step 0 for the person, and the bar says so as for any start or fork
    // (it said "idle", which read as nothing happening), whole in the bar at 1024 px.
    await expect.poll(() => app.stepper.episodeState.innerText()).toBe('paused at step 0');
    expect(await layout.readable(app.stepper.episodeState)).toBe(true);
    // Started, the inspector is on step 0: what the agent was told, as the file says it.
    await inspector.waitForStep(0, 60_000);
    await inspector.task.waitFor();
    await expect(inspector.task.getByTestId('task-name').innerText()).resolves.toBe('harbor-report');
    await expect(inspector.taskGoal.innerText()).resolves.toBe(instruction);
    // Its HTML is text: no element made of it, no handler run.
    expect(await inspector.taskGoal.locator('img, h1, strong').count()).toBe(0);
    expect(await app.page.evaluate(() => document.body.dataset.pwned ?? null)).toBeNull();
    // Folded: a few lines on screen, the rest behind "more", which unfolds it to its last line.
    const folded = (await inspector.taskGoal.boundingBox())?.height ?? Infinity;
    expect(folded, 'the folded goal is a few lines').toBeLessThan(120);
    expect(await layout.onScreen(inspector.taskMore)).toBe(true);
    expect(await layout.readable(inspector.taskGoal)).toBe(true);
    await expect(inspector.task.getByTestId('task-limits').innerText()).resolves.toMatch(/episode 120 s/);
    // What decides the outcome, beside what the agent was told: its tests, out of the agent's sight.
    await expect(inspector.task.getByTestId('task-check').innerText()).resolves.toMatch(
      /^check bash \/tests\/test\.sh, with \d+ files? only it sees in \/tests \(.*test\.sh.*\)$/,
    );
    expect(await layout.readable(inspector.task.getByTestId('task-check'))).toBe(true);
    await app.screenshot('harbor-step0-task-folded-1024x700');
    await inspector.taskMore.click();
    await expect(inspector.taskMore.getAttribute('aria-expanded')).resolves.toBe('true');
    const open = (await inspector.taskGoal.boundingBox())?.height ?? 0;
    expect(open).toBeGreaterThan(folded);
    // Unfolded, every line is there to read: the box holds it or scrolls to it, nothing clamped.
    expect(
      await inspector.taskGoal.evaluate((el) => {
        const style = getComputedStyle(el);
        return el.scrollHeight <= el.clientHeight + 1 || style.overflowY === 'auto';
      }),
    ).toBe(true);
    await inspector.taskGoal.scrollIntoViewIfNeeded();
    expect(await layout.readable(inspector.taskGoal), await layout.unreadable(inspector.taskGoal)).toBe(true);
    await app.screenshot('harbor-step0-task-open-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  for (const size of [
    { width: 1280, height: 800 },
    { width: 1024, height: 700 },
  ]) {
    const tag = `${size.width}x${size.height}`;
    it(`at ${tag}: Open… completes the typed path, lists the folder with a Goal, starts it with a scripted agent and steps it`, async () => {
      const app = await web.open(size);
      const { library } = app;
      const layout = new LayoutObject(app.page);
      await library.waitForTasks();
      await library.openButton.scrollIntoViewIfNeeded();
      expect(await layout.onScreen(library.openButton)).toBe(true);
      await library.openButton.click();
      // Bad input first: nothing there, and a file that is not a task.
      await library.openPath.fill(join(dir, 'no-such-folder'));
      await app.page.getByTestId('open-submit').click();
      await expect
        .poll(() => app.page.getByTestId('open-error').innerText())
        .toMatch(/^Path: nothing at .*no-such-folder/);
      await library.openPath.fill(join(project, 'notes.txt'));
      await app.page.getByTestId('open-submit').click();
      await expect
        .poll(() => app.page.getByTestId('open-error').innerText())
        .toMatch(/is a file, not a folder or a task\.json/);
      // Typed with completion: the folder's entries that start with what was typed.
      await library.openPath.fill(`${dir}/wea`);
      await library.openSuggestions.filter({ hasText: `${project}/` }).waitFor();
      // What it opens, devcontainer folders named among them (they open, and were not said).
      await expect(library.openDialog.innerText()).resolves.toContain(
        'your own project folder (a devcontainer one too), a task.json or a Harbor task folder',
      );
      await app.screenshot(`open-project-completion-${tag}`);
      await library.openSuggestions.filter({ hasText: `${project}/` }).click();
      await expect(library.openPath.inputValue()).resolves.toBe(`${project}/`);
      expect(await layout.coveredButtons()).toEqual([]);
      await app.page.getByTestId('open-submit').click();
      // Opened, the dialog closes and the folder is listed (already, after the first size: opened again).
      await library.openDialog.waitFor({ state: 'detached' });
      const item = library.project(project);
      await item.waitFor();
      // A bare folder: Start says why it waits, until its Goal is typed.
      const start = item.getByTestId('project-start');
      expect(await start.getAttribute('data-why')).toMatch(/Type its Goal first/);
      // Said beside it in view, not only on hover: "▶ Start" greyed with no word read as broken.
      await expect(library.projectStartWhy(project).innerText()).resolves.toBe('needs a goal');
      expect(await layout.onScreen(library.projectStartWhy(project))).toBe(true);
      await app.screenshot(`open-project-needs-goal-${tag}`);
      await item.getByTestId('project-goal').fill('Read notes.txt and say whether to take an umbrella');
      // The goal typed, it waits for an agent alone (a project names none of its own), said beside it.
      expect(await library.projectStartWhy(project).count()).toBe(0);
      expect(await start.getAttribute('data-why')).toMatch(/^Agent: this task names no agent of its own/);
      await expect(library.projectAgent(project).innerText()).resolves.toBe(
        'no agent yet: type one in Agent, above',
      );
      await library.agentField.fill(`scripted:${script}`);
      expect(await start.getAttribute('aria-disabled')).toBeNull();
      await item.scrollIntoViewIfNeeded();
      // Said by its folder's name, not the host's path (the list showed /tmp/stepbox-e2e-…/weather-notes).
      await expect(library.projectPath(project).innerText()).resolves.toBe('folder · weather-notes');
      await expect(library.projectPath(project).getAttribute('title')).resolves.toBe(project);
      await app.screenshot(`open-project-listed-${tag}`);
      await start.click();
      await app.stepper.waitForBranch(120_000);
      await app.settled({ timeoutMs: 120_000 });
      expect(await app.stepper.taskName.innerText()).toBe('weather-notes');
      await app.page.keyboard.press('F10');
      await app.timeline.row(1).waitFor({ timeout: 60_000 });
      await app.settled({ timeoutMs: 60_000 });
      // The project's files are the workspace: the agent read them.
      await app.inspector.root.filter({ hasText: 'Beijing: rain tomorrow' }).waitFor({ timeout: 60_000 });
      // A project's files are its own, not a leak from an earlier episode.
      expect(await app.timeline.flagEntries.count()).toBe(0);
      await app.page.keyboard.press('F10');
      await app.timeline.row(2).waitFor({ timeout: 60_000 });
      await app.settled({ timeoutMs: 60_000 });
      await app.inspector.root.filter({ hasText: 'README.md' }).waitFor({ timeout: 60_000 });
      await app.screenshot(`open-project-stepped-${tag}`);
      await app.page.keyboard.press('Shift+F5');
      await app.stepper.waitForState('ended');
      // Recently opened projects stay listed, with the Goal typed for them (it was lost: "needs a goal").
      await app.page.reload();
      await app.waitForReady();
      await library.project(project).waitFor();
      await expect(library.projectGoal(project).inputValue()).resolves.toBe(
        'Read notes.txt and say whether to take an umbrella',
      );
      expect(await library.projectStartWhy(project).count()).toBe(0);
      expect(app.errors).toEqual([]);
      await app.page.close();
    }, 400_000);
  }
});

describe('web mode: a start that would be refused is said before anything is stopped (walk shots 49–52, 86–88)', () => {
  const web = servedApp();
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-refused-'));
    mkdirSync(join(dir, 'walker-bad'));
    writeFileSync(join(dir, 'walker-bad', 'task.json'), '{"name": "walker-bad", "goal": "x",,}\n');
    mkdirSync(join(dir, 'walker-proj'));
    writeFileSync(join(dir, 'walker-proj', 'notes.txt'), 'hello\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('at 1024x700: Open… lists a broken task.json with its problem and Start off; a missing Agent file is said under Agent, and the live episode is not asked about', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const { library } = app;
    const layout = new LayoutObject(app.page);
    await library.waitForTasks();
    // A live episode with work on screen: a start from the library would ask to stop it.
    await library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled({ timeoutMs: 120_000 });
    const live = await app.stepper.episodeId.innerText();

    // A task.json that does not parse: said at Open…, in its item, and Start says why it is off.
    const bad = join(dir, 'walker-bad');
    await library.openProject(bad);
    await expect
      .poll(() => library.projectProblem(bad).innerText())
      .toMatch(/not valid JSON at line 1, column \d+/);
    const badStart = library.project(bad).getByTestId('project-start');
    expect(await badStart.getAttribute('aria-disabled')).toBe('true');
    expect(await badStart.getAttribute('data-why')).toMatch(/does not read/);
    await library.project(bad).scrollIntoViewIfNeeded();
    expect(await layout.onScreen(library.projectProblem(bad))).toBe(true);
    await app.screenshot('start-refused-bad-task-json-1024x700');

    // A bare folder, its Goal typed, an Agent file that is not there: refused before the question.
    const proj = join(dir, 'walker-proj');
    await library.openProject(proj);
    await library.project(proj).getByTestId('project-goal').fill('List the files and write a summary');
    await library.agentField.fill('scripted:agent.jsonl');
    await library.project(proj).getByTestId('project-start').click();
    await expect.poll(() => library.startFieldError.innerText()).toMatch(/^Agent: no file at .*agent\.jsonl/);
    expect(await app.stepper.stopQuestion.count()).toBe(0);
    // Said under the field it names, on screen at 1024×700 (it was under the case panel).
    expect(await layout.onScreen(library.startFieldError)).toBe(true);
    expect(await library.project(proj).getByTestId('project-error').count()).toBe(0);
    // The live episode runs on, still shown.
    expect(await app.stepper.episodeId.innerText()).toBe(live);
    expect(await app.stepper.episodeState.innerText()).not.toMatch(/ended|interrupted/);
    await app.screenshot('start-refused-agent-field-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});

describe('web mode: a failed build stays said on its project while the library changes (CI run 8)', () => {
  const web = servedApp();
  let dir: string;
  let script: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-build-error-'));
    // A task.json whose image is built from a Dockerfile whose RUN fails (never cached: it fails).
    mkdirSync(join(dir, 'breaks'));
    writeFileSync(
      join(dir, 'breaks', 'task.json'),
      JSON.stringify({ name: 'breaks', goal: 'x', sandbox: { build: 'Dockerfile' } }),
    );
    writeFileSync(
      join(dir, 'breaks', 'Dockerfile'),
      // The build takes a moment before it fails: the card is seen while its own start is under way.
      `# ${process.pid}-${Date.now()}\nFROM stepbox-sandbox:2\nRUN sleep 2 && echo broken on purpose && exit 3\n`,
    );
    const scripts = join(web.home(), 'scripts');
    mkdirSync(scripts, { recursive: true });
    script = join(scripts, 'build-error.jsonl');
    writeFileSync(script, JSON.stringify({ role: 'assistant', content: 'done' }) + '\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an episode written by another process joins the list; the build error stays on the card', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const { library } = app;
    await library.waitForTasks();
    const proj = join(dir, 'breaks');
    await library.openProject(proj);
    await library.agentField.fill(`scripted:${script}`);
    await library.projectStart(proj).click();
    // While its image builds, the card's own Start says it is starting (it said "Another start is
    // under way." under the button just pressed), read in the same task as the build's line.
    await app.notices
      .ofKind('image')
      .filter({ hasText: 'Building the image of' })
      .waitFor({ timeout: 60_000 });
    const during = await app.page.evaluate((path) => {
      const start = Array.from(document.querySelectorAll('[data-testid="project"]'))
        .find((p) => p.getAttribute('data-path') === path)
        ?.querySelector('[data-testid="project-start"]');
      return {
        notice: document.querySelector('[data-testid="notice"][data-kind="image"]')?.textContent ?? '',
        why: start?.getAttribute('data-why') ?? null,
      };
    }, proj);
    expect(during.notice).toContain('Building the image of breaks/Dockerfile');
    expect(during.why).toBe('It is starting: step 0 opens once its sandbox is up.');
    const error = library.projectError(proj);
    await error.waitFor({ timeout: 120_000 });
    const said = await error.innerText();
    expect(said).toMatch(/returned a non-zero code/);
    // The library changes under it (the store watch tells library.changed): in CI the card's
    // error was shown, then gone with the list's next read, and Start offered as if nothing failed.
    const store = openEpisodeStore(web.home(), { skipMarkInterrupted: true });
    const other = await writeSampleEpisode(store, { task: 'written-elsewhere', steps: 1 });
    await expect.poll(() => library.episodes(), { timeout: 30_000 }).toContain(other.episode);
    expect(await error.count()).toBe(1);
    expect(await error.innerText()).toBe(said);
    await library.project(proj).scrollIntoViewIfNeeded();
    await app.screenshot('open-project-build-error-kept-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    await library.project(proj).scrollIntoViewIfNeeded();
    await app.screenshot('open-project-build-error-kept-1920x1080');
    // Started again, the old error goes with the new start.
    writeFileSync(join(proj, 'Dockerfile'), `FROM stepbox-sandbox:2\n`);
    await library.projectStart(proj).click();
    await app.stepper.waitForBranch(120_000);
    expect(await error.count()).toBe(0);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
