import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Journeys through the debugger as a person sees them: roll back then continue (the
 * window follows the branch the engine continues on), a manual agent asked for its
 * decision, and the Files diff of the file the step wrote. Each is looked at again at
 * 1024×700; screenshots are `journey-<name>-<size>.png`.
 */

async function started(app: AppPage): Promise<void> {
  await app.stepper.episodeState.waitFor({ timeout: 90_000 });
  await app.terminal.root
    .getByTestId('terminal-mode')
    .filter({ hasText: 'open' })
    .waitFor({ timeout: 90_000 });
  await app.settled({ timeoutMs: 90_000 });
}

async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ timeoutMs: 90_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step, 90_000);
  await app.settled({ timeoutMs: 90_000 });
}

/** The report's lines (its summary, a step's verdict) that the pinned Replay buttons cut across. */
function cutByBand(app: AppPage): Promise<string[]> {
  return app.replay.body.evaluate((body) => {
    const band = body.querySelector('[data-pinned]')!.getBoundingClientRect().bottom;
    return Array.from(body.querySelectorAll<HTMLElement>('.report > :not(ol), .report .replay-steps > li'))
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.top < band - 0.5 && r.bottom > band + 0.5;
      })
      .map(
        (el) =>
          `${el.innerText.slice(0, 40)} (${Math.round(band - el.getBoundingClientRect().top)} px under)`,
      );
  });
}

async function atBothSizes(app: AppPage, name: string, see: () => Promise<void>): Promise<void> {
  await see();
  await app.screenshot(`journey-${name}-1280x800`);
  await app.resize({ width: 1024, height: 700 });
  await see();
  await app.screenshot(`journey-${name}-1024x700`);
  await app.page.setViewportSize({ width: 1280, height: 800 });
}

describe('journeys: rollback, manual agent, files diff', () => {
  const web = servedApp();

  it('rollback → continue: new rows appear on the branch the engine continues on; nothing hangs', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    await app.library.startTask('hello-python');
    await started(app);
    await stepTo(app, 1);
    await stepTo(app, 2);
    const before = await app.library.branches();

    await app.timeline.select(1);
    await app.replay.root.getByTestId('rollback').click();
    await app.replay.root
      .getByTestId('replay-notice')
      .filter({ hasText: 'rolled back to step 1' })
      .waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 90_000 });
    // Continue: the engine closes the old branch and goes on in a new one; the window follows.
    await app.page.keyboard.press('F10');
    const after = await until(
      () => app.library.branches(),
      (b) => b.length > before.length,
      60_000,
      'a new branch in the library',
    );
    const fresh = after.find((b) => !before.includes(b));
    expect(fresh).toBeDefined();
    await app.timeline.waitForStep(2, 90_000);
    await app.settled({ timeoutMs: 90_000 });
    await atBothSizes(app, 'rollback-continue', async () => {
      const layout = new LayoutObject(app.page);
      const row = app.timeline.row(2);
      await row.scrollIntoViewIfNeeded();
      expect(await layout.onScreen(row)).toBe(true);
      expect(await row.getByTestId('row-status').innerText()).not.toBe('incomplete');
      // Counts read as words and are true: the branch rolled back at step 1 recorded 2 steps
      // (issue 19: not "1 step") and says where it was rolled back; never "1 steps"; an
      // episode's reward is not followed by a dangling "·".
      const tree = await app.timeline.root.getByTestId('branch-tree').innerText();
      expect(tree).toMatch(/rolled back to 1\s+2 steps\b/);
      expect(tree).not.toMatch(/\b1 steps\b/);
      const heads = await app.library.root.locator('.lib-episode-head').allInnerTexts();
      for (const head of heads) expect(head.trim()).not.toMatch(/·$/);
      // The window shows the new branch, live: F10 is not disabled, the state is not "running".
      await expect(app.stepper.episodeState.innerText()).resolves.toMatch(/paused|idle/);
    });
    await stepTo(app, 3);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 420_000);

  it('manual agent: F10 without a decision asks for one; a decision continues; the Files diff shows the file it wrote', async () => {
    // At 1024×700 first: there the guidance above Send was scrolled out but for "Escape).".
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.root.getByTestId('library-agent').fill('manual');
    await app.library.startTask('hello-python');
    await started(app);
    await app.page.keyboard.press('F10');
    const asks = app.inject.root.getByTestId('decide-asks');
    await asks.waitFor({ timeout: 30_000 });
    const layout = new LayoutObject(app.page);
    // The form is the way on: the ask and its Send whole on screen, and no "pause to inject"
    // beside an agent that waits for this very form (both were said at once).
    const sendNow = app.inject.root.getByTestId('decide-send');
    await until(
      () => layout.onScreen(sendNow),
      (v) => v,
      10_000,
      'Send on screen',
    );
    expect(await layout.onScreen(asks)).toBe(true);
    // The guidance whole in Inject's own view, beside its Send (not only inside the window).
    expect(await layout.notWhollyInView(asks), 'the guidance at 1024×700').toBe('');
    expect(await layout.notWhollyInView(sendNow), 'Send at 1024×700').toBe('');
    await app.screenshot('journey-manual-asks-1024x700');
    await app.page.setViewportSize({ width: 1280, height: 800 });
    // Send stays whole at 1280×800 too: it sat half under the Sandbox header.
    expect(await layout.notWhollyInView(sendNow), 'Send at 1280×800').toBe('');
    expect(await app.inject.root.innerText()).not.toMatch(/pause \(or hit a breakpoint\) to inject/);
    // The bar says the agent waits for the person: nothing runs until they decide (it read
    // "running · working…").
    await expect(app.stepper.episodeState.innerText()).resolves.toBe('waiting for you');
    expect(await app.stepper.root.innerText()).not.toContain('working');
    // In the amber of a move that is the person's, not the blue of the agent working.
    expect(await app.stepper.episodeState.getAttribute('class')).toMatch(/\bst-waiting\b/);
    // Replay says the same: nothing is under way until the person decides.
    expect(await app.replay.root.innerText()).toContain('the agent is waiting for you to decide');
    await app.screenshot('journey-manual-asks-1280x800');

    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await app.inject.root.getByTestId('decide-args').fill('{"command": "echo made-by-a-person > human.txt"}');
    const send = app.inject.root.getByTestId('decide-send');
    expect(await send.isDisabled()).toBe(false);
    await send.click();
    await app.timeline.waitForStep(1, 60_000);
    // Sent: the box is empty for the next decision (as a REPL clears its input), not holding the last.
    const args = app.inject.root.getByTestId('decide-args');
    await until(
      () => args.inputValue(),
      (v) => v === '',
      10_000,
      'the decision box cleared',
    );
    await app.settled({ timeoutMs: 90_000 });

    await atBothSizes(app, 'manual-files-diff', async () => {
      await app.timeline.select(1);
      await app.inspector.waitForStep(1);
      await app.inspector.tab('files');
      await app.inspector.root
        .getByTestId('inspector-files')
        .filter({ hasText: 'human.txt' })
        .waitFor({ timeout: 20_000 });
      // The diff on screen is the named file's, keyed by this branch and step.
      const after = await app.inspector.model('diff-after', (v) => v.includes('made-by-a-person'));
      // Its one line, no empty second line after its closing newline.
      expect(after).toBe('made-by-a-person');
      const scopes = await app.inspector.modelScopes();
      expect(decodeURIComponent(scopes['diff-after'])).toMatch(/\/1\/human\.txt$/);
    });

    // F10 again with no decision: the window asks; Escape ends the wait. The episode is
    // paused at step 1 (not "working…"), and the bar says what it waits for.
    await app.page.keyboard.press('F10');
    await asks.waitFor({ timeout: 30_000 });
    await app.timeline.root.click({ position: { x: 5, y: 5 } });
    await app.page.keyboard.press('Escape');
    await app.settled({ timeoutMs: 30_000 });
    const reason = app.stepper.stopReason;
    await reason.filter({ hasText: 'step 2 waits for your decision' }).waitFor({ timeout: 10_000 });
    expect(await app.stepper.episodeState.innerText()).toBe('paused');
    expect(await app.stepper.root.innerText()).not.toContain('working');
    expect(await app.timeline.lastStep()).toBe(1);
    await app.screenshot('journey-manual-released-1280x800');

    // A person writes a file in the terminal between steps; the next step's Files tab says so.
    await app.terminal.run('echo typed-by-me > by-hand.txt; echo wrote-it', 'wrote-it');
    await app.timeline.root.click({ position: { x: 5, y: 5 } });
    // ↑ in the empty box brings back the decision sent, as a shell's history does.
    await args.click();
    await app.page.keyboard.press('ArrowUp');
    expect(await args.inputValue()).toBe('{"command": "echo made-by-a-person > human.txt"}');
    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await app.inject.root.getByTestId('decide-args').fill('{"command": "cat by-hand.txt"}');
    await app.inject.root.getByTestId('decide-send').click();
    await app.inject.root.getByTestId('inject-notice').waitFor({ timeout: 10_000 });
    await stepTo(app, 2);
    // The timeline marks the step after which the person typed.
    await app.timeline.row(1).locator('.mark-hum').waitFor({ timeout: 20_000 });
    await atBothSizes(app, 'terminal-file-mark', async () => {
      await app.timeline.select(2);
      await app.inspector.waitForStep(2);
      await app.inspector.tab('files');
      const mark = app.inspector.root.getByTestId('file-by-person');
      await mark.waitFor({ timeout: 20_000 });
      expect(await mark.innerText()).toBe('changed in the terminal by you, before step 2');
      const item = app.inspector.root.locator('[data-path="by-hand.txt"]');
      expect(await item.getByTestId('file-by-person').count()).toBe(1);
      await mark.scrollIntoViewIfNeeded();
      expect(await layout.onScreen(mark)).toBe(true);
      // The queued decision's notice went with the step that took it.
      expect(await app.inject.root.getByTestId('inject-notice').count()).toBe(0);
    });

    // The agent leaves a writer running (its own session, past its call); a file the person
    // then writes is not marked as surely theirs, and the step says who else was running.
    // The call returns once the writer wrote (so it is in its own session): returned at the
    // fork, a loaded machine let the call's end kill the writer before its setsid, nothing
    // else ran, and step 3 rightly named no other writer (CI, both cores busy here: 1 run in 4).
    await app.resize({ width: 1280, height: 800 });
    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await app.inject.root
      .getByTestId('decide-args')
      .fill(
        `{"command": "setsid -f sh -c 'while :; do date > clock.txt; sleep 0.1; done' >/dev/null 2>&1; until [ -e clock.txt ]; do sleep 0.01; done"}`,
      );
    await app.inject.root.getByTestId('decide-send').click();
    await stepTo(app, 3);
    await app.terminal.run('echo beside > beside.txt; echo wrote-beside', 'wrote-beside');
    await app.timeline.root.click({ position: { x: 5, y: 5 } });
    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await app.inject.root.getByTestId('decide-args').fill('{"command": "cat beside.txt"}');
    await app.inject.root.getByTestId('decide-send').click();
    await stepTo(app, 4);
    await atBothSizes(app, 'terminal-file-maybe', async () => {
      await app.timeline.select(3);
      await app.inspector.waitForStep(3);
      const others = app.inspector.root.getByTestId('inspector-human-others');
      await others.waitFor({ timeout: 20_000 });
      expect(await others.innerText()).toMatch(
        // The loop's sleep, or its date caught mid-run on a loaded machine (both its children).
        /^Files changed while it ran \(.*beside\.txt.*\) may not all be yours: the agent's sh \(pid \d+\)(, (sleep|date) \(pid \d+\))*( and (sleep|date) \(pid \d+\))? (was|were) running too\.$/,
      );
      await app.timeline.select(4);
      await app.inspector.waitForStep(4);
      await app.inspector.tab('files');
      const mark = app.inspector.root.locator('[data-path="beside.txt"]').getByTestId('file-by-person');
      await mark.waitFor({ timeout: 20_000 });
      expect(await mark.innerText()).toBe(
        'changed while your terminal command ran, before step 4: maybe not by you',
      );
      expect(await mark.getAttribute('data-sure')).toBe('no');
      await mark.scrollIntoViewIfNeeded();
      expect(await layout.onScreen(mark)).toBe(true);
    });
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 540_000);

  it('re-execution names the files that differ and gives each step its verdict', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    await app.library.root.getByTestId('library-agent').fill('manual');
    await app.library.startTask('hello-python');
    await started(app);
    const decide = async (command: string) => {
      await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
      await app.inject.root.getByTestId('decide-args').fill(JSON.stringify({ command }));
      await app.inject.root.getByTestId('decide-send').click();
      await app.inject.root.getByTestId('inject-notice').waitFor({ timeout: 10_000 });
    };
    // Step 1 is not deterministic (the clock); step 2 is.
    await decide('date +%N > now.txt; cat now.txt');
    await stepTo(app, 1);
    await decide('echo steady > steady.txt');
    await stepTo(app, 2);
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);

    await app.replay.root.getByTestId('replay-verify').click();
    const report = app.replay.root.getByTestId('replay-report');
    await report.waitFor({ timeout: 120_000 });
    const summary = await report.getByTestId('replay-summary').innerText();
    expect(summary).toContain('Re-executed 2 steps');
    expect(summary).toContain('results first differ at step 1');
    // The recorded and the re-executed output end with a line break, shown as such (it read
    // “943054012 ”, a stray space where the line ended).
    // What differed in words, never a path into the result (it read `execute_shell.stdout`).
    await expect(report.getByTestId('replay-first-divergence').innerText()).resolves.toMatch(
      /^step 1, execute_shell's stdout: recorded “\d+\\n”, now “\d+\\n”$/,
    );
    const one = report.locator('[data-testid="replay-step"][data-step="1"]');
    const two = report.locator('[data-testid="replay-step"][data-step="2"]');
    expect(await one.getAttribute('data-verdict')).toBe('diverged');
    expect(await one.innerText()).toContain("results differ: execute_shell's stdout");
    expect(await one.getByTestId('replay-step-files').innerText()).toBe('files differ: now.txt');
    expect(await one.getByTestId('replay-step-mark').innerText()).toBe('✗ results differ');
    // Step 2's own results match; its files still differ by the clock's file, named: the mark
    // says which (it read "✗ diverged" beside "same results"), and that the difference is step
    // 1's, carried (it read "✗ files differ", as if step 2 had changed now.txt).
    expect(await two.innerText()).toContain('same results');
    expect(await two.getByTestId('replay-step-mark').innerText()).toBe('✗ files differ (since step 1)');
    expect(await two.getByTestId('replay-step-files').innerText()).toBe('files differ: now.txt');
    await atBothSizes(app, 'replay-verdicts', async () => {
      const layout = new LayoutObject(app.page);
      // Scrolled to as the window scrolls to what it reveals (scrollIntoView, which keeps below
      // Replay's pinned buttons through the body's scroll padding); Playwright's own scroll
      // ignores the padding and left the row under the buttons at 1024×700.
      await one.evaluate((el) => el.scrollIntoView({ block: 'nearest' }));
      expect(await layout.onScreen(one)).toBe(true);
      // What differs reads as one column: the files line starts under the results line.
      for (const row of [one, two]) {
        const [results, files] = await Promise.all([
          row.locator('span').nth(2).boundingBox(),
          row.getByTestId('replay-step-files').boundingBox(),
        ]);
        expect(Math.abs(files!.x - results!.x)).toBeLessThanOrEqual(1);
      }
      // Room to read it under the pinned buttons: brought to the band's top, 8 lines of it show
      // or all of it (one line at 1024×700, under three rows of buttons), the buttons whole.
      await report.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      const height = (await report.boundingBox())!.height;
      expect(await layout.shownPx(app.replay.body, report), 'report shown').toBeGreaterThanOrEqual(
        Math.min(height, 8 * 16),
      );
      for (const id of ['rollback', 'reopen', 'fork', 'fork-settings-open', 'replay-verify'])
        expect(await layout.notWhollyInView(app.replay.root.getByTestId(id)), id).toBe('');
      // Scrolled to its end, no line of the report is cut by the pinned band: its summary sat a
      // few px under the buttons at 1024×700 (the end was where the content ran out).
      await app.replay.body.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      await expect(app.replay.body.evaluate((el) => el.scrollTop)).resolves.toBeGreaterThan(0);
      expect(await cutByBand(app), 'lines cut by the pinned band at full scroll').toEqual([]);
    });
    // At 1920×1080 the lower pane grows by the report: read whole (it had ~100 px under a timeline
    // mostly empty), the terminal keeps its room, the timeline its rows.
    await app.resize({ width: 1920, height: 1080 });
    const large = new LayoutObject(app.page);
    await report.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const whole = (await report.boundingBox())!.height;
    expect(await large.shownPx(app.replay.body, report), 'report whole at 1920×1080').toBeGreaterThanOrEqual(
      whole - 1,
    );
    expect((await app.terminal.root.boundingBox())!.height, 'terminal at 1920×1080').toBeGreaterThanOrEqual(
      200,
    );
    expect(await app.timeline.rowsRoom(), 'timeline rows at 1920×1080').toBeGreaterThanOrEqual(10);
    await app.screenshot('journey-replay-verdicts-1920x1080');
    await app.page.setViewportSize({ width: 1280, height: 800 });
    // A verdict is one click from its step.
    await two.click();
    await app.inspector.waitForStep(2);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 420_000);

  it('the inspector fits its pane at 1024×700 and 1920×1080: arguments, result and the Files diff', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.startTask('hello-python');
    await started(app);
    // Step 5 rewrites greet.py: its diff has both sides.
    for (let k = 1; k <= 5; k++) await stepTo(app, k);
    const inspector = app.inspector.root;
    /** Every view's right edge inside the inspector, its height readable and within the pane. */
    const fits = async (selector: string, size: string) => {
      const pane = await inspector.boundingBox();
      const views = inspector.locator(selector);
      expect(await views.count(), `${size}: ${selector} shown`).toBeGreaterThan(0);
      for (const view of await views.all()) {
        await view.scrollIntoViewIfNeeded();
        const box = await view.boundingBox();
        expect(box && pane, `${size}: ${selector} has a box`).toBeTruthy();
        if (!box || !pane) return;
        expect(box.x + box.width, `${size}: ${selector} inside the pane`).toBeLessThanOrEqual(
          pane.x + pane.width + 1,
        );
        expect(box.height, `${size}: ${selector} readable`).toBeGreaterThanOrEqual(40);
        expect(box.y + box.height, `${size}: ${selector} within the pane`).toBeLessThanOrEqual(
          pane.y + pane.height + 1,
        );
        expect(box.y, `${size}: ${selector} below the pane's top`).toBeGreaterThanOrEqual(pane.y);
      }
    };
    for (const [width, height] of [
      [1024, 700],
      [1920, 1080],
    ] as const) {
      const size = `${width}x${height}`;
      await app.resize({ width, height });
      await app.timeline.select(5);
      await app.inspector.waitForStep(5);
      await app.inspector.tab('call');
      await app.inspector.model('arguments.json', (v) => v.includes('greet.py'));
      // The tool's name, not the call's id beside it ("execute_shell call_5"): the id is in the tooltip.
      const name = app.inspector.callNames.first();
      expect(await name.innerText()).toMatch(/^[a-z_]+$/);
      expect(await name.getAttribute('title')).toMatch(/^tool call id \S+$/);
      expect(await app.inspector.root.locator('.call-title').first().innerText()).not.toMatch(/call_\w+/);
      await fits('[data-json-view]', size);
      await app.screenshot(`journey-inspector-call-${size}`);
      await app.inspector.tab('files');
      await app.inspector.model('diff-after', (v) => v.includes('argv'), 30_000);
      await fits('.monaco-box.diff', size);
      // greet.py's four lines and no fifth: its final newline drew an empty line 5 below them.
      expect(await app.inspector.lastLineNumber()).toBe(4);
      await app.screenshot(`journey-inspector-files-${size}`);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 420_000);
});
