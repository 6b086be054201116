import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp } from '../support/e2e';

/**
 * Walk 11, finding 1: an agent script outside the places a start reads from (the task's folder,
 * the store, the bundled files, an opened project) could not be started from the window at all,
 * though the CLI takes it: Choose… browsed the same places only. Choose… → Your folders browses
 * the person's folders as Open… does; the file picked there is granted for that field by the
 * server, and a typed path still is not. Screenshots: `choose-own-<what>-<size>.png`.
 *
 * Grants13: the grant is for one field of one task's starts, kept in the store: a reload of the
 * window and a restart of the server find it; another task, a neighbour file and a cleared
 * field do not.
 */
const person = mkdtempSync(join(tmpdir(), 'stepbox-person-'));
const scripts = join(person, 'scripts');
mkdirSync(scripts);
copyFileSync(join(process.cwd(), 'resources/tasks/hello-python/agent.jsonl'), join(scripts, 'fix.jsonl'));
writeFileSync(join(scripts, 'other.jsonl'), '{"content":"done"}\n');
afterAll(() => rmSync(person, { recursive: true, force: true }));

describe("web mode: Choose… picks a script in the person's own folders", () => {
  const web = servedApp({ env: { HOME: person } });

  it('a typed script outside is refused with the way forward; picked with Choose… → Your folders it starts', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const library = app.library;
    await library.waitForTasks();
    const fix = join(scripts, 'fix.jsonl');
    // Typed: refused before the start, saying the way forward.
    await library.agentField.fill(`scripted:${fix}`);
    await expect
      .poll(() => library.startRefusalForAll.innerText())
      .toMatch(
        /outside the folders stepbox reads files from .*; pick the file with Choose… → Your folders to let stepbox read it/,
      );
    await library.startRefusalForAll.scrollIntoViewIfNeeded();
    expect(await layout.readable(library.startRefusalForAll)).toBe(true);
    await app.screenshot('choose-own-refused-1024x700');

    // Choose… → Your folders: the person's home, then a folder in it, then the file.
    await app.page.getByTestId('pick-agent').click();
    const picker = library.filePicker;
    await picker.waitFor({ timeout: 10_000 });
    await picker.getByTestId('picker-root-host').click();
    await picker.locator('[data-testid="picker-path"]', { hasText: person }).waitFor({ timeout: 20_000 });
    await library.pickerEntry('scripts').click();
    const entry = library.pickerEntry('fix.jsonl');
    await entry.waitFor({ timeout: 20_000 });
    // Whom the pick is for: the task named beside Your folders, said in the words too.
    await picker.getByTestId('picker-for-task').selectOption('hello-python');
    await expect(picker.getByTestId('picker-words').innerText()).resolves.toMatch(
      /^The file you choose here is the one stepbox may read for this field, on starts of hello-python; nothing else in this folder is\./,
    );
    // A way up: the person's folders are not one root.
    await expect(picker.getByTestId('picker-up').count()).resolves.toBe(1);
    await entry.click();
    expect(await layout.onScreen(picker)).toBe(true);
    expect(await layout.readable(entry)).toBe(true);
    await app.screenshot('choose-own-picker-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('choose-own-picker-1920x1080');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await picker.getByTestId('picker-choose').click();
    await picker.waitFor({ state: 'detached', timeout: 10_000 });
    await expect(library.agentField.inputValue()).resolves.toBe(`scripted:${fix}`);
    // Granted for hello-python: its card reads it, and says it was chosen; the other task's refuses.
    await expect.poll(() => library.startRefusalForAll.count()).toBe(0);
    await expect(library.agentChosen.innerText()).resolves.toMatch(
      /^chosen in Your folders for hello-python\s+Forget$/,
    );
    await expect(library.startReads('hello-python').innerText()).resolves.toMatch(
      /· chosen in Your folders$/,
    );
    await expect(library.startRefusal('notes-memory').innerText()).resolves.toMatch(
      /^Agent: scripted:\S+ is outside the folders stepbox reads files from \([^)]*\): it was chosen in Your folders for hello-python only; choose it again for this task with Choose… → Your folders$/s,
    );
    await app.screenshot('choose-own-chosen-1024x700');
    await library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await expect(library.startFieldError.count()).resolves.toBe(0);

    // Its neighbour typed in the field is no pick: still refused, at the start too.
    await library.agentField.fill(`scripted:${join(scripts, 'other.jsonl')}`);
    await expect.poll(() => library.startRefusalForAll.count()).toBe(1);
    await library.startTask('hello-python');
    await expect
      .poll(() => library.startFieldError.innerText(), { timeout: 60_000 })
      .toMatch(/^Agent: scripted:\S+ is outside the folders stepbox reads files from/);
    await app.screenshot('choose-own-neighbour-refused-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 240_000);

  it('the pick is kept: after a reload and a server restart Start runs it; a neighbour, another task or a cleared field are refused', async () => {
    const fix = join(scripts, 'fix.jsonl');
    const other = join(scripts, 'other.jsonl');
    // A reload of the window: the field is empty; typed again, the card knows the grant (the
    // server's, files.chosen) and says it, as the start will.
    let app = await web.open({ width: 1024, height: 700 });
    let library = app.library;
    await library.waitForTasks();
    await library.agentField.fill(`scripted:${fix}`);
    await expect.poll(() => library.agentChosen.count()).toBe(1);
    await expect(library.startRefusal('hello-python').count()).resolves.toBe(0);
    await expect(library.startReads('hello-python').innerText()).resolves.toMatch(
      /· chosen in Your folders$/,
    );
    await expect(library.startRefusal('notes-memory').count()).resolves.toBe(1);
    const layout = new LayoutObject(app.page);
    await library.agentChosen.scrollIntoViewIfNeeded();
    expect(await layout.readable(library.agentChosen)).toBe(true);
    await app.screenshot('choose-own-reloaded-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('choose-own-reloaded-1920x1080');
    await app.page.close();

    // A restart of the server: the grant is in the store; Start runs the script.
    await web.restart();
    app = await web.open({ width: 1024, height: 700 });
    library = app.library;
    await library.waitForTasks();
    await library.agentField.fill(`scripted:${fix}`);
    await expect.poll(() => library.agentChosen.count()).toBe(1);
    await library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await expect(library.startFieldError.count()).resolves.toBe(0);

    // Its neighbour: refused before the click and at the start.
    await library.agentField.fill(`scripted:${other}`);
    await expect.poll(() => library.startRefusalForAll.count()).toBe(1);
    await library.startTask('hello-python');
    await expect
      .poll(() => library.startFieldError.innerText(), { timeout: 60_000 })
      .toMatch(/^Agent: scripted:\S+ is outside the folders stepbox reads files from/);

    // Cleared, the field's file is no longer chosen: typed again, it is refused like any path outside.
    await library.agentField.fill(`scripted:${fix}`);
    await expect.poll(() => library.agentChosen.count()).toBe(1);
    await library.agentField.fill('');
    await expect.poll(() => library.agentChosen.count()).toBe(0);
    await library.agentField.fill(`scripted:${fix}`);
    await expect.poll(() => library.startRefusalForAll.count()).toBe(1);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
