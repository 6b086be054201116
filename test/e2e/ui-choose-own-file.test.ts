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
    await expect(picker.getByTestId('picker-words').innerText()).resolves.toMatch(
      /^The file you choose here is the one stepbox may read for this field; nothing else in this folder is\./,
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
    // Granted: no refusal before the click, and the start runs the script.
    await expect.poll(() => library.startRefusalForAll.count()).toBe(0);
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
});
