import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { writeLongTrace } from '../../electron/bench/ui-trace';
import { parseJsonOutput, runCli } from '../support/cli';
import { describeDocker } from '../support/docker';
import { existsSync } from 'node:fs';
import { launchBrowser, openApp, removeHome, SCREENSHOTS, startServe, tempHome } from '../support/e2e';
import { openShared } from '../support/share';
import { randomBytes } from 'node:crypto';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store';
import { writeSampleEpisode } from '../support/traces';

interface ShareJson {
  out: string;
  bytes: number;
  steps: number;
  flags: number;
}

async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

describe('stepbox share: one HTML file, opened offline from file://', () => {
  let browser: Browser;
  let home: string;
  beforeAll(async () => {
    home = tempHome('stepbox-share-');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    if (home) removeHome(home);
  });

  describeDocker('a case episode', () => {
    it('shows the timeline, the inspector for a chosen step, its Files diff, QA flags, branches and the walkthrough', async () => {
      const env = { env: { STEPBOX_HOME: home }, timeoutMs: 120_000 };
      const run = await runCli(['case', 'run', 'destructive-clean-start', '--json'], env);
      const episode = parseJsonOutput<{ episodes: { episode: string }[] }>(run).episodes[0].episode;
      const file = join(home, 'destructive.html');
      // Redacted as a person would share it: credentials hidden, the task's words as they are
      // (a word of its goal given as the pattern showed "still prints [REDACTED]").
      const share = await runCli(['share', episode, '--out', file, '--redact', '@secrets', '--json'], env);
      const out = parseJsonOutput<ShareJson>(share);
      expect(out).toMatchObject({ out: file, steps: 3, flags: 2 });
      expect(out.bytes).toBe(statSync(file).size);

      const shared = await openShared(browser, file);
      const { page, requests, errors } = shared;
      expect(await shared.steps.count()).toBe(4);
      // Counted in words, and no path of this machine: the agent's script from its case's folder.
      await expect(shared.count.textContent()).resolves.toBe('3 steps · 2 QA flags · redacted');
      // Why it ended in words, the end_reason code in the badge's tooltip ("failed (final_answer)").
      await expect(shared.status.textContent()).resolves.toBe(
        'failed — the agent gave its final answer; the verifier failed',
      );
      await expect(shared.status.getAttribute('title')).resolves.toBe('end reason: final_answer');
      await expect(shared.ids.textContent()).resolves.toContain(
        'scripted:destructive-clean-start/agent.jsonl',
      );
      const text = readFileSync(file, 'utf8') + (await page.content());
      for (const local of [process.cwd(), home]) expect(text).not.toContain(local);
      await expect(shared.goal.textContent()).resolves.toBe(
        'Remove the stale build output in build/, then check that `python3 src/app.py` still prints ready.',
      );
      await shot(page, 'share-destructive-1280x800-open');
      // The step that deleted the workspace: its action, then its Files tab with every file deleted.
      await shared.step(2).click();
      await expect.poll(() => shared.inspectorTitle.textContent()).toContain('Step 2');
      expect(await shared.inspector.textContent()).toContain('rm -rf ./*');
      await shared.tab('files');
      const files = await shared.inspector.textContent();
      expect(files).toContain('deleted docs/notes.md');
      expect(files).toContain('Two days of design notes');
      // Nothing harmless hidden: the deleted notes read as written.
      expect(files).not.toContain('[REDACTED]');
      // A folder is said to be one ("deleted data" over "a folder, or a file without text").
      const headings = await shared.sectionHeadings.allTextContents();
      expect(headings).toContain('deleted folder data/');
      expect(headings).not.toContain('deleted data');
      expect(files).not.toContain('a folder, or a file without text');
      // A file ending in a newline ends at its last line: no empty `-` line after it.
      await expect(shared.diffLines('deleted docs/notes.md').allTextContents()).resolves.toEqual([
        '- # Notes',
        '- ',
        '- Two days of design notes that exist nowhere else.',
      ]);
      await shot(page, 'share-destructive-1280x800-step2-files');
      await shared.tab('qa');
      // The QA tab: the rule's label, its evidence as a list (keys in words), not the trace's JSON.
      const qa = await shared.inspector.textContent();
      expect(qa).toContain('error · Destructive action');
      expect(qa).toContain('deleted count10');
      expect(qa).not.toMatch(/"deleted_count"|\{\s*"/);
      expect(await shared.flags.textContent()).toContain('step 2 · Destructive action');
      expect(await shared.branches.textContent()).toContain(episode);
      expect(await shared.walkthrough.textContent()).toContain('Getting the work back');
      await shot(page, 'share-destructive-1280x800-step2-qa');
      expect(requests).toEqual([]);
      expect(errors).toEqual([]);
      await shared.close();
    }, 240_000);

    it('in the window: Save as case… adds the episode to the case list, Share… downloads the file', async () => {
      const run = await runCli(['case', 'run', 'permission-gave-up', '--json'], {
        env: { STEPBOX_HOME: home },
        timeoutMs: 120_000,
      });
      const episode = parseJsonOutput<{ episodes: { episode: string }[] }>(run).episodes[0].episode;
      const served = await startServe({ home });
      try {
        const app = await openApp(browser, served.url, { width: 1280, height: 800 });
        await app.library.openBranch(episode);
        await app.timeline.saveCaseButton.click();
        await app.timeline.saveCaseName.fill('window-readonly');
        await shot(app.page, 'share-window-1280x800-save-dialog');
        await app.timeline.saveCaseSave.click();
        await expect
          .poll(() => app.timeline.teachingNote.textContent())
          .toContain('Saved as case window-readonly');
        // Where to finish it, in the store (it named /tmp/stepbox-share-…/cases/…, then
        // $STEPBOX_HOME/cases/…, which read as a variable); the full path on hover.
        const saved = await app.notices.said('save-case');
        expect(saved.text).toContain('its walkthrough is cases/window-readonly/README.md in the store');
        expect(saved.text).not.toContain('$');
        expect(saved.text).not.toContain(home);
        expect(saved.title).toContain(join(home, 'cases', 'window-readonly', 'README.md'));
        expect(existsSync(join(home, 'cases', 'window-readonly', 'expected.json'))).toBe(true);
        // The note names the rules by their labels, and the walkthrough is written whole: no
        // "TODO: one paragraph" left in the saved case for a person to find.
        expect(await app.timeline.teachingNote.textContent()).toMatch(/QA flags Gave up/);
        const readme = readFileSync(join(home, 'cases', 'window-readonly', 'README.md'), 'utf8');
        expect(readme).not.toMatch(/TODO/);
        expect(readme).toMatch(
          /## What you will see\nThe agent is asked: “[^”]+” It takes \d+ steps?\. The episode /,
        );
        const downloading = app.page.waitForEvent('download');
        await app.timeline.shareButton.click();
        const download = await downloading;
        const file = join(home, 'from-window.html');
        await download.saveAs(file);
        expect(download.suggestedFilename()).toBe(`${episode}.html`);
        await expect.poll(() => app.timeline.teachingNote.textContent()).toMatch(/KiB.*opens offline/);
        // Where the file was written, in the store; the full path on hover, and there it is.
        const shared = await app.notices.said('share');
        expect(shared.text).toMatch(
          new RegExp(
            `^Shared as shares/${episode}\\.html in the store \\([\\d.]+ KiB; your browser downloads a copy\\)`,
          ),
        );
        expect(shared.text).not.toContain(home);
        const written = join(home, 'shares', `${episode}.html`);
        expect(shared.title).toContain(written);
        expect(readFileSync(written, 'utf8')).toContain(episode);
        await shot(app.page, 'share-window-1280x800-shared');
        // At 1024×700 the message is read whole, where the file is included.
        await app.page.setViewportSize({ width: 1024, height: 700 });
        const note = app.notices.ofKind('share').last().locator('.notice-text');
        expect(await note.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
        await shot(app.page, 'share-window-1024x700-shared');
        expect(app.errors).toEqual([]);
        await app.page.close();
        const opened = await openShared(browser, file);
        expect(await opened.walkthrough.textContent()).toContain('permission fault');
        expect(opened.requests).toEqual([]);
        await opened.close();
      } finally {
        await served.close();
      }
    }, 300_000);
  });

  it("a 10 MB output of random text: a small file, the step's notice and its head and tail, at 1024x700 and 1920x1080", async () => {
    // Random (gzip packs nothing): whole, the file was 10 MB and the page froze opening the step.
    const random = randomBytes(7_500_000)
      .toString('base64')
      .replace(/(.{76})/g, '$1\n');
    const big = `${random}\nLAST LINE: AssertionError\n`;
    const ep = await writeSampleEpisode(openEpisodeStore(home), {
      script: [
        { args: { command: 'python3 -m pytest -vv' }, result: { stdout: big, bytes: big.length } },
        { final: 'The tests fail: see the last line.' },
      ],
    });
    const file = join(home, 'big-output.html');
    const out = parseJsonOutput<ShareJson & { omitted: string[] }>(
      await runCli(['share', ep.branch, '--out', file, '--json'], { env: { STEPBOX_HOME: home } }),
    );
    expect(out.bytes).toBeLessThan(300_000);
    expect(out.omitted.join('\n')).toContain(`npx stepbox show ${ep.branch} --json prints them whole`);
    const shared = await openShared(browser, file);
    const { page, requests, errors } = shared;
    await page.setViewportSize({ width: 1024, height: 700 });
    await expect(shared.omitted.textContent()).resolves.toContain('the middle of long texts at 1 step (1)');
    await shared.step(1).click();
    await expect.poll(() => shared.inspectorTitle.textContent()).toContain('Step 1');
    const left = (big.length - 65_536).toLocaleString('en-US');
    await expect(shared.cutSummary.innerText()).resolves.toBe(
      `Too long to show whole: execute_shell's stdout, ${left} characters left out. How to see it whole…`,
    );
    await shared.tab('output');
    const output = (await shared.inspector.textContent()) ?? '';
    expect(output).toContain(`${left} characters left out here (too long to show whole)`);
    expect(output).toContain('LAST LINE: AssertionError');
    // Its size in the window's words, not "10131605 bytes".
    expect(output).toContain('execute_shell: exit 0 · 9.7 MiB · 5.0 ms');
    expect(output).toContain(big.slice(0, 200));
    // Nothing on the page near the 10 MB: the whole document's text is bounded.
    expect(await page.evaluate(() => document.body.textContent?.length ?? 0)).toBeLessThan(200_000);
    await shot(page, 'share-big-output-1024x700');
    await shared.cutSummary.click();
    await expect(shared.cutNotice.innerText()).resolves.toContain(
      `execute_shell's stdout is ${big.length.toLocaleString('en-US')} characters (about 9.7 MiB): shown are its first 49,152 and last 16,384 characters; the ${left} characters between them are left out.`,
    );
    await expect(shared.cutCommand.innerText()).resolves.toBe(`npx stepbox show ${ep.branch} --json`);
    // The notice, open, leaves the tabs and the output in view, its command read whole.
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1920, height: 1080 },
    ]) {
      await page.setViewportSize(size);
      const box = await shared.cutNotice.boundingBox();
      const body = await page.locator('#inspector-body').boundingBox();
      expect(box && body && box.y + box.height <= body.y + 1).toBe(true);
      expect(body && body.height > 200).toBe(true);
      expect(await shared.cutCommand.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
      await shot(page, `share-big-output-open-${size.width}x${size.height}`);
    }
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await shared.close();
  }, 120_000);

  it('a 10,000-step episode: first render measured in Chromium, a screen of rows, size reported', async () => {
    const trace = await writeLongTrace(home, 10_000);
    const file = join(home, 'long.html');
    const share = await runCli(['share', trace.branch, '--out', file, '--json'], {
      env: { STEPBOX_HOME: home },
      timeoutMs: 120_000,
    });
    const out = parseJsonOutput<ShareJson>(share);
    expect(out.steps).toBe(10_000);
    expect(out.bytes).toBe(statSync(file).size);
    const shared = await openShared(browser, file);
    const { page, requests, errors } = shared;
    const ms = await page.evaluate(
      () => (window as unknown as { __shareFirstRenderMs: number }).__shareFirstRenderMs,
    );
    console.log(`[share] 10,000-step file: ${out.bytes} bytes, first render ${Math.round(ms)} ms`);
    // The 2 s target is the bench's (share_first_render_ms, share_target_met): on a loaded
    // machine a test only asserts the file stays usable.
    expect(ms).toBeLessThan(15_000);
    // Virtualized: a screen of rows, not ten thousand nodes.
    expect(await shared.steps.count()).toBeLessThan(100);
    await shared.filterField.fill('9999');
    await shared.step(9999).click();
    await expect.poll(() => shared.inspectorTitle.textContent()).toContain('Step 9999');
    await shot(page, 'share-long-1280x800-step9999');
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await shared.close();
  }, 240_000);
});
