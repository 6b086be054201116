import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 33 round three, item 3: the window walked as a demanding new user would, at 1024×700
 * and 1920×1080, through the Open… journey (issue 30, item 6) and issue 33's items: a Harbor
 * task folder and a task.json opened by path, started with a scripted agent, stepped, paused
 * before its tools, injected into, rolled back, forked, compared, saved as a case and shared;
 * after each, nothing lies over a button (Save as case… says on focus why this unflagged episode
 * is no case), and the messages about it go when another episode is opened. Screenshots: `walk-<what>-<size>.png`.
 */

const ROOT = new URL('../..', import.meta.url).pathname;

/** Nothing lies over a button, after `what`. */
async function nothingCovered(app: AppPage, what: string): Promise<void> {
  expect(await new LayoutObject(app.page).coveredButtons(), `covered after ${what}`).toEqual([]);
}

async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ timeoutMs: 90_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step, 90_000);
  await app.settled({ timeoutMs: 90_000 });
}

function call(id: string, name: string, args: Record<string, unknown>): string {
  return JSON.stringify({
    role: 'assistant',
    tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });
}

describe('web mode: a new user walks the window (Open…, step, pause, inject, rollback, fork, compare, case, share)', () => {
  const web = servedApp();
  let dir: string;
  let harbor: string;
  let taskJson: string;
  let script: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-walk-'));
    // A Harbor task folder (its image prebuilt: stepbox-sandbox:2) and a task.json of one's own.
    harbor = join(dir, 'hello-file');
    cpSync(join(ROOT, 'test/fixtures/harbor/dataset/hello-file'), harbor, { recursive: true });
    const project = join(dir, 'umbrella');
    mkdirSync(project);
    taskJson = join(project, 'task.json');
    writeFileSync(
      taskJson,
      JSON.stringify({
        name: 'umbrella',
        goal: 'Read notes.txt and write hello.txt saying whether to take an umbrella',
        workspace: { files: { 'notes.txt': 'Beijing: rain tomorrow\n' } },
      }),
    );
    // The agent's answers, in the store (a place the path rule reads from).
    const scripts = join(web.home(), 'scripts');
    mkdirSync(scripts, { recursive: true });
    script = join(scripts, 'walk.jsonl');
    writeFileSync(
      script,
      [
        call('c1', 'execute_shell', { command: 'ls' }),
        call('c2', 'execute_shell', { command: 'cat notes.txt 2>/dev/null; echo read' }),
        call('c3', 'write_file', { path: 'hello.txt', content: 'Hello, Harbor!\n' }),
        call('c4', 'execute_shell', { command: 'cat hello.txt' }),
        JSON.stringify({ role: 'assistant', content: 'Done.' }),
      ].join('\n') + '\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const walk of [
    { size: { width: 1024, height: 700 }, what: 'harbor', path: () => harbor, says: 'Harbor task · ' },
    { size: { width: 1920, height: 1080 }, what: 'task-json', path: () => taskJson, says: 'task.json · ' },
  ]) {
    const tag = `${walk.size.width}x${walk.size.height}`;
    it(`at ${tag}: opens a ${walk.what} by path and walks every control`, async () => {
      const app = await web.open(walk.size);
      const { library } = app;
      const layout = new LayoutObject(app.page);
      const shot = (name: string) => app.screenshot(`walk-${walk.what}-${name}-${tag}`);
      await library.waitForTasks();

      // Open… by path: listed, started with the scripted agent.
      await library.openProject(walk.path());
      const item = library.project(walk.path());
      await item.scrollIntoViewIfNeeded();
      // A Harbor task and a task.json say what to do themselves: listed as tasks, no Goal to type
      // (a Harbor folder was listed as a bare folder, Start waiting for a Goal, its instruction unread).
      expect(await item.getByTestId('project-goal').count()).toBe(0);
      // And each says how it is written (a Harbor task read "task · hello-file").
      expect(await library.projectPath(walk.path()).innerText()).toContain(walk.says);
      await library.agentField.fill(`scripted:${script}`);
      // A spec longer than the field is said whole under it (the field showed its tail).
      await expect(library.agentWhole.innerText()).resolves.toBe(`scripted:${script}`);
      expect(await layout.readable(library.agentWhole)).toBe(true);
      await shot('listed');
      await nothingCovered(app, 'Open…');
      await item.getByTestId('project-start').click();
      await app.stepper.waitForBranch(120_000);
      await app.settled({ timeoutMs: 120_000 });
      await shot('started');

      // Step, then pause before the tools of the next step (P): the held card, its reasons on screen.
      await stepTo(app, 1);
      await app.page.keyboard.press('p');
      await expect.poll(() => app.stepper.root.getByTestId('stop-before-tool').isChecked()).toBe(true);
      await app.page.keyboard.press('F10');
      await app.held.waitBeforeTool(2);
      await app.settled({ timeoutMs: 90_000 });
      await nothingCovered(app, 'a step held before its tools');
      expect(await layout.unexplainedDisabled(), 'disabled without a reason (held)').toEqual([]);
      // The memory in use is read against the sandbox's own limit, the one its limits line says
      // (it was the cgroup's: "23 MiB / 2256 MiB" beside "1 GiB").
      const memory = await app.sandbox.memory();
      expect(memory.limit).toBe(memory.limitsSay);
      // Each size keeps its unit on its line ("disk 512 ⏎MiB" at 1024 wide).
      expect(await app.sandbox.limits.innerText()).toMatch(/disk\u00a0\d+\u00a0[MG]iB$/);
      await shot('held');
      await app.page.keyboard.press('p');
      await app.page.keyboard.press('F10');
      await app.held.waitGone();
      await app.timeline.waitForStep(2, 90_000);
      await app.settled({ timeoutMs: 90_000 });

      // Inject, then a step reads it.
      await app.inject.inject('The user asks: is it going to rain?');
      await nothingCovered(app, 'an injection');
      await stepTo(app, 3);

      // Rollback to 2: at once on a new branch, paused at 2.
      const parent = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
      await app.timeline.select(2);
      await app.replay.rollback();
      const rolled = await until(
        () => app.stepper.episodeId.getAttribute('data-id'),
        (id) => id !== null && id !== '' && id !== parent,
        60_000,
        'the rolled-back branch on screen',
      );
      await until(
        () => app.stepper.episodeState.innerText(),
        (t) => t === 'paused at step 2',
        30_000,
        '"paused at step 2"',
      );
      await app.settled({ timeoutMs: 90_000 });
      expect(await layout.readable(app.stepper.stopReason)).toBe(true);
      expect(await layout.readable(app.replay.root.getByTestId('replay-notice'))).toBe(true);
      await nothingCovered(app, 'a rollback');
      await shot('rolled-back');

      // Fork at 1 of the rolled-back branch, then compare it with the branch rolled back.
      await app.timeline.select(1);
      await app.replay.fork();
      await app.settled({ timeoutMs: 90_000 });
      await nothingCovered(app, 'a fork');
      await stepTo(app, 2);
      await app.sideBySide.openCompare();
      // (The comparison is a view laid over the panes by design: the panes' buttons are behind it.)
      const verdict = await app.sideBySide.compareWith(parent);
      expect(await verdict.innerText()).not.toBe('');
      await shot('compared');
      await app.sideBySide.close();

      // Stopped: saved as a case, shared; every button reachable, every disabled one says why.
      await app.page.keyboard.press('Shift+F5');
      await app.stepper.waitForState('ended', 60_000);
      await app.settled({ ended: true, timeoutMs: 90_000 });
      // Save as case…: this episode raised no QA flag, so there is no failure to teach; the
      // button says so on screen when focused, in a line at the top of the timeline that covers
      // nothing (a case's run is saved in ui-notices.test.ts).
      const save = app.timeline.saveCaseButton;
      await save.focus();
      await expect
        .poll(() => app.timeline.saveCaseWhy.innerText())
        .toMatch(/raised no QA flag at warning or worse/);
      expect(await layout.readable(app.timeline.saveCaseWhy)).toBe(true);
      await shot('save-case-why');
      await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      const downloading = app.page.waitForEvent('download');
      await app.timeline.shareButton.click();
      await downloading;
      await expect
        .poll(() => app.notices.ofKind('share').innerText())
        .toMatch(/KiB; your browser downloads a copy\): it opens offline/);
      await nothingCovered(app, 'Share…');
      expect(await layout.unexplainedDisabled(), 'disabled without a reason (ended)').toEqual([]);
      await shot('shared');

      // Another episode: the messages about this one go, its forms are empty.
      await library.startTask('hello-python');
      await until(
        () => app.stepper.taskName.innerText(),
        (t) => t === 'hello-python',
        90_000,
        'hello-python on screen',
      );
      await app.settled({ timeoutMs: 90_000 });
      await expect.poll(() => app.notices.items.count()).toBe(0);
      expect(await app.replay.root.getByTestId('replay-notice').count()).toBe(0);
      await nothingCovered(app, 'another episode');
      await shot('other-episode');
      await app.page.keyboard.press('Shift+F5');
      await app.stepper.waitForState('ended', 60_000);
      expect(app.errors).toEqual([]);
      await app.page.close();
      expect(rolled).not.toBe(parent);
    }, 600_000);
  }
});
