import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Gaps a person found in the window, each walked from the first click: a QA flag read whole
 * in its timeline row, a file new at a step shown as added, and a case card clicked while
 * another case's episode is live (the window asks first; stopped, it says so).
 */

const SIZES = [
  { width: 1024, height: 700 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;

/** Opens a case from its card and waits until its episode is ready in the stepper. */
async function openCase(app: AppPage, id: string): Promise<string> {
  await app.library.openCase(id);
  const run = app.library.caseRun('broken', id);
  await run.waitFor({ timeout: 120_000 });
  await app.settled({ ended: true, timeoutMs: 120_000 });
  return (await run.getAttribute('data-branch')) ?? '';
}

describe('web mode: the window gaps a person found', () => {
  const web = servedApp();

  it('a QA flag is read whole in its timeline row at 1280×800 and 1920×1080, and at 1024×700 as its rule’s one word beside 16 characters of arguments', async () => {
    const app = await web.open(SIZES[0]);
    const layout = new LayoutObject(app.page);
    await openCase(app, 'fallback-writes-none');
    await app.library.caseRunIt.click();
    await app.stepper.waitForEnd(180_000);
    for (const size of SIZES) {
      const tag = await app.resize(size);
      // The flag in the ROW (the flag list above the timeline names it too): whole, not "⚑ memo…".
      const flag = app.timeline.row(2).locator('[data-flag="memory_corruption"]');
      await flag.waitFor({ timeout: 30_000 });
      expect(await layout.readable(flag), `${tag}: the flag reads whole in row 2`).toBe(true);
      await expect(flag.getAttribute('title')).resolves.toMatch(
        /^Memory corruption \(QA rule memory_corruption\)/,
      );
      if (size.width > 1024) await expect(flag.innerText()).resolves.toBe('⚑ Memory corruption');
      // In the narrow timeline the flag is its rule's one word, whole, its name in the tooltip and
      // the flag list above: its name and the arguments were both cut ("Instal… ⚑ Unverified succ…").
      else {
        await expect(flag.innerText()).resolves.toBe('⚑ Memory');
        expect(await app.timeline.argsRoom(2), `${tag}: row 2's arguments`).toBeGreaterThanOrEqual(16);
      }
      // Rows stay one height (the timeline is virtualized) and the row keeps its call.
      const box = await app.timeline.row(2).boundingBox();
      expect(Math.round(box!.height)).toBe(22);
      expect(await layout.readable(app.timeline.row(2).locator('.tl-tool'))).toBe(true);
      await expect(app.timeline.row(2).locator('.tl-args').getAttribute('title')).resolves.toBe(
        '{"city":"beijing"}',
      );
      await app.screenshot(`gaps-flag-${tag}`);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('a file new at a step shows whole as added, with no deleted line, at 1024×700 and 1920×1080', async () => {
    const app = await web.open(SIZES[0]);
    const layout = new LayoutObject(app.page);
    // hello-python's own agent lists the workspace (step 1), then writes greet.py (step 2).
    await app.library.startTask('hello-python');
    await app.settled({ ended: true, timeoutMs: 60_000 });
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled({ ended: true, timeoutMs: 60_000 });
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(2);
    await app.settled({ ended: true, timeoutMs: 60_000 });
    await app.timeline.select(2);
    await app.inspector.waitForStep(2);
    await app.inspector.tab('files');
    const files = app.inspector.root.getByTestId('inspector-files');
    await expect(files.innerText()).resolves.toMatch(/A\s+greet\.py/);
    for (const size of [SIZES[0], SIZES[2]]) {
      const tag = await app.resize(size);
      const caption = app.inspector.root.getByTestId('file-caption');
      await caption.waitFor({ timeout: 20_000 });
      await expect(caption.innerText()).resolves.toBe('greet.py: new at step 2 — 4 lines, all added');
      await expect(caption.getAttribute('data-side')).resolves.toBe('added');
      expect(await layout.readable(caption), `${tag}: the caption reads whole`).toBe(true);
      // Its content, every line marked added; nothing drawn as deleted, no empty "before" side.
      expect(await app.inspector.model('diff-after', (v) => v.includes('sys.argv'))).toContain('sys.argv[2]');
      const models = await app.inspector.models();
      expect(Object.keys(models)).not.toContain('diff-before');
      const editor = app.inspector.root.locator('[data-model="whole"][data-side="added"]');
      await editor.locator('.file-gutter-added').first().waitFor({ timeout: 20_000 });
      expect(await editor.locator('.file-gutter-added').count()).toBeGreaterThanOrEqual(4);
      expect(
        await app.inspector.root.locator('.line-delete, .char-delete, .file-gutter-removed').count(),
      ).toBe(0);
      expect(await layout.onScreen(editor)).toBe(true);
      await app.screenshot(`gaps-files-added-${tag}`);
    }
    // Stopped here: a closed page would leave it live on the server, holding its sandbox.
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('a case card clicked while another case runs live asks first: Cancel keeps it running, Stop starts the new case (issue 19 item 8)', async () => {
    const app = await web.open(SIZES[0]);
    const layout = new LayoutObject(app.page);
    const first = await openCase(app, 'tool-loop-vague-error');
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled({ ended: true, timeoutMs: 120_000 });
    await until(
      () => app.library.branchStatus(first),
      (s) => s === 'live',
      30_000,
      'the first case listed live',
    );

    // The person's switches and breakpoints are theirs for the session: the next case gets them.
    await app.stepper.stopBeforeTool.check();
    await app.page.keyboard.press('F9');
    await app.breakpoints.toggle.filter({ hasText: 'Breakpoints (1)' }).waitFor();

    // Another card: the window asks before it stops work, Cancel focused.
    await app.library.openCase('fallback-writes-none');
    const question = app.stepper.stopQuestion;
    await question.waitFor({ timeout: 10_000 });
    await expect(question.innerText()).resolves.toMatch(/Stop the live episode\?/);
    await expect(question.innerText()).resolves.toMatch(/tool-loop-vague-error is live \(at step 1\)/);
    const cancel = question.getByTestId('stop-question-cancel');
    const stop = question.getByTestId('stop-question-stop');
    expect(await cancel.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await layout.onScreen(question)).toBe(true);
    expect(await layout.readable(stop)).toBe(true);
    await app.screenshot('case-switch-question-1024x700');
    // Tab stays inside the question; F5 does not run the episode behind it.
    await app.page.keyboard.press('Tab');
    expect(await stop.evaluate((el) => el === document.activeElement)).toBe(true);
    await app.page.keyboard.press('Tab');
    expect(await cancel.evaluate((el) => el === document.activeElement)).toBe(true);
    await app.page.keyboard.press('F5');
    // Escape (Cancel): nothing stops or starts; the first case is still live and shown at step 1.
    await app.page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached', timeout: 10_000 });
    await expect(app.stepper.episodeId.getAttribute('title')).resolves.toContain(first);
    await expect(app.stepper.episodeState.innerText()).resolves.toMatch(/paused|idle/);
    expect(await app.library.branchStatus(first)).toBe('live');
    await expect(app.library.walkthroughOf('tool-loop-vague-error').count()).resolves.toBe(1);
    expect(await app.timeline.rows()).toHaveLength(2);

    // Again, and Stop: the new case starts; the earlier one is stopped.
    await app.library.openCase('fallback-writes-none');
    await question.waitFor({ timeout: 10_000 });
    await app.resize(SIZES[2]);
    expect(await layout.onScreen(question)).toBe(true);
    await app.screenshot('case-switch-question-1920x1080');
    await app.resize(SIZES[0]);
    await stop.click();
    await question.waitFor({ state: 'detached', timeout: 10_000 });
    const run = app.library.caseRun('broken', 'fallback-writes-none');
    await run.waitFor({ timeout: 120_000 });
    await app.settled({ ended: true, timeoutMs: 120_000 });
    const second = (await run.getAttribute('data-branch')) ?? '';
    expect(second).not.toBe(first);
    expect(await app.stepper.stopBeforeTool.isChecked()).toBe(true);
    await app.breakpoints.toggle.filter({ hasText: 'Breakpoints (1)' }).waitFor();
    // The earlier episode is no longer live: the list shows it stopped (interrupted), not "live".
    await until(
      () => app.library.branchStatus(first),
      (s) => s === 'interrupted',
      60_000,
      'the first case listed as stopped',
    );
    // The window says what became of it in its one notification area, in one line, and how to
    // go back to it (the notice's button).
    const note = app.notices.ofKind('left-episode');
    await note.waitFor({ timeout: 10_000 });
    await expect(note.locator('.notice-text').innerText()).resolves.toBe(
      `Stopped tool-loop-vague-error (${first}) at step 1 so it does not run unseen; its trace is kept.`,
    );
    expect(await layout.onScreen(note), 'the note is on screen').toBe(true);
    await expect(app.library.root.getByText('Stopped tool-loop-vague-error').count()).resolves.toBe(0);
    // Of the two, only the episode on screen is live.
    const live = await app.library.root
      .locator('[data-testid="branch-node"][data-status="live"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-branch')));
    expect(live).toContain(second);
    expect(live).not.toContain(first);
    await app.screenshot('gaps-case-switch-1024x700');
    await app.resize(SIZES[2]);
    expect(await layout.onScreen(note)).toBe(true);
    await app.screenshot('gaps-case-switch-1920x1080');

    // The stopped run is kept: the notice's button opens its trace, with its step, and the
    // notice (about the start that left it) goes.
    await app.notices.action('left-episode').click();
    await app.timeline.waitForStep(1);
    await expect(app.stepper.episodeId.getAttribute('title')).resolves.toContain(first);
    await expect.poll(() => note.count()).toBe(0);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
