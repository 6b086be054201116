import { describe, expect, it } from 'vitest';
import { BreakpointsSection, LayoutObject, servedApp, type AppPage } from '../support/e2e';

/** The held action card, once it shows step `step` waiting before its tools. */
async function heldAt(app: AppPage, step: number) {
  const card = app.inspector.root.locator('[data-testid="held-action"][data-stage="before_tool"]', {
    hasText: `Paused before step ${step} runs`,
  });
  await card.waitFor({ timeout: 60_000 });
  return card;
}

describe('web mode: pause before the tool runs, edit its arguments, run it', () => {
  const web = servedApp();

  for (const size of [
    { width: 1280, height: 800 },
    { width: 1024, height: 700 },
  ]) {
    const tag = `${size.width}x${size.height}`;
    it(`at ${tag}: the decided action shows before it runs; edited arguments run and their result is in the inspector`, async () => {
      const app = await web.open(size);
      const layout = new LayoutObject(app.page);
      await app.library.startTask('hello-python');
      await app.page.getByTestId('episode-state').waitFor({ timeout: 60_000 });
      await app.settled();

      const toggle = app.page.getByTestId('stop-before-tool');
      await toggle.check();
      await expect(toggle.isChecked()).resolves.toBe(true);

      // Step 1: the agent's decided call is on screen, not yet run; "Run it" runs it as decided.
      await app.page.keyboard.press('F10');
      let card = await heldAt(app, 1);
      await expect(card.getByTestId('held-call').innerText()).resolves.toMatch(
        /The agent wants to run: list_dir\s+\{\s+"path": "\."\s+\}/,
      );
      expect(await layout.onScreen(card.getByTestId('held-run'))).toBe(true);
      // The card says why it stopped, whole; the toolbar is not left to cut a sentence short:
      // the branch's id and state read whole in it, and the reason is not said twice.
      await expect(card.locator('h3').textContent()).resolves.toContain('Paused before step 1 runs');
      expect(await layout.readable(card.locator('h3'))).toBe(true);
      expect(await layout.readable(app.page.getByTestId('episode-id'))).toBe(true);
      expect(await layout.readable(app.page.getByTestId('episode-state'))).toBe(true);
      await expect(app.page.getByTestId('stop-reason').count()).resolves.toBe(0);
      // The held step's row says in a word that it waits for the person.
      const status = app.timeline.row(1).getByTestId('row-status');
      await expect(status.innerText()).resolves.toBe('waiting');
      expect(await layout.readable(status)).toBe(true);
      // The Inject panel's fields take its width (a broken style once left them 170 px wide).
      const [field, pane] = await Promise.all([
        app.inject.root.getByTestId('inject-text').boundingBox(),
        app.inject.root.boundingBox(),
      ]);
      expect(field!.width).toBeGreaterThan(pane!.width * 0.8);
      await app.screenshot(`stop-before-tool-${tag}-held`);
      await card.getByTestId('held-run').click();
      await app.timeline.waitForStep(1);
      await app.settled();

      // Steps 2 and 3 with F10: step 3 is `python3 greet.py World`; edit it before it runs.
      await app.page.keyboard.press('F10');
      await heldAt(app, 2);
      await app.settled();
      await app.page.keyboard.press('F10');
      await app.inspector.waitForStep(2);
      await app.settled();
      await app.page.keyboard.press('F10');
      card = await heldAt(app, 3);
      await expect(card.getByTestId('held-args').innerText()).resolves.toContain('python3 greet.py World');
      await card.getByTestId('held-edit-arguments').click();
      const editor = card.getByTestId('held-editor');
      // The editor has the focus: keyboard first.
      await expect(editor.evaluate((el) => el === document.activeElement)).resolves.toBe(true);

      // Arguments the tool's schema refuses: the reason shows beside the editor, nothing runs.
      await editor.fill('{"cmd": "echo nope"}');
      await card.getByTestId('held-save-run').click();
      const refusal = card.getByTestId('held-error');
      await refusal.waitFor({ timeout: 10_000 });
      await expect(refusal.innerText()).resolves.toMatch(/execute_shell: .*command/);
      expect(await layout.onScreen(refusal)).toBe(true);
      await app.screenshot(`stop-before-tool-${tag}-refused`);

      // Not JSON yet: said as it is typed; the run button waits.
      await editor.fill('{"command": "echo EDITED-BY-PERSON"');
      await card.getByTestId('held-syntax').waitFor({ timeout: 5_000 });
      await expect(card.getByTestId('held-save-run').isDisabled()).resolves.toBe(true);

      await editor.fill('{"command": "echo EDITED-BY-PERSON"}');
      await card.getByTestId('held-save-run').click();
      await app.timeline.waitForStep(3);
      await app.settled();
      await app.inspector.waitForStep(3);
      await app.inspector.tab('output');
      await app.inspector.root
        .getByTestId('inspector-stdout')
        .filter({ hasText: 'EDITED-BY-PERSON' })
        .waitFor({ timeout: 20_000 });
      // The timeline row shows the command that ran, and marks the step as changed by a person.
      const row = await app.timeline.rowAt(3);
      expect(row.text).toContain('echo EDITED-BY-PERSON');
      await expect(app.timeline.row(3).getAttribute('data-edited')).resolves.toBe('true');
      // The inspector says what the agent had decided, beside what ran.
      await expect(app.inspector.root.getByTestId('inspector-edit').innerText()).resolves.toMatch(
        /You changed the arguments before it ran; the agent had decided: execute_shell .*python3 greet\.py World/,
      );
      await app.screenshot(`stop-before-tool-${tag}-edited-result`);

      // Step 4 (read_file): give its result instead of running it.
      await app.page.keyboard.press('F10');
      card = await heldAt(app, 4);
      await card.getByTestId('held-replace-result').click();
      await card.getByTestId('held-editor').fill('GIVEN-BY-A-PERSON');
      await card.getByTestId('held-save-run').click();
      await app.inspector.waitForStep(4);
      await app.settled();
      await app.inspector.tab('call');
      await app.inspector.root.getByTestId('inspector-replaced').waitFor({ timeout: 20_000 });
      await app.inspector.tab('output');
      await app.inspector.root
        .getByTestId('inspector-stdout')
        .filter({ hasText: 'GIVEN-BY-A-PERSON' })
        .waitFor({ timeout: 20_000 });
      await expect(app.timeline.row(4).locator('.mark-ovr').count()).resolves.toBe(1);
      await app.screenshot(`stop-before-tool-${tag}-replaced-result`);

      // Turning the stops off: F10 runs a whole step again.
      await toggle.uncheck();
      await app.page.keyboard.press('F10');
      await app.timeline.waitForStep(5);
      await app.settled();
      await expect(app.inspector.root.getByTestId('held-action').count()).resolves.toBe(0);
      await expect(app.timeline.row(5).getByTestId('row-status').innerText()).resolves.not.toBe('waiting');

      // To the end: the Inject panel says in one sentence that nothing can be sent, and offers the fork.
      await app.page.keyboard.press('F5');
      await app.page
        .locator('[data-testid="stepper-bar"]:is([data-state="ended"], [data-state="none"])')
        .waitFor({ timeout: 60_000 });
      // How it ended, read whole at this width (not cut after "the agen…" in the toolbar).
      const end = app.page.getByTestId('end-reason');
      await expect(end.innerText()).resolves.toBe('This episode succeeded: the agent gave its final answer.');
      expect(await layout.readable(end)).toBe(true);
      const ended = app.inject.root.getByTestId('inject-ended');
      await ended.waitFor({ timeout: 10_000 });
      await expect(ended.innerText()).resolves.toMatch(
        /This episode has ended, so nothing can be injected into it\. Fork it at a step to inject there\.\s+Fork at step \d+/,
      );
      expect(await layout.readable(ended.locator('.state'))).toBe(true);
      expect(await layout.onScreen(app.inject.root.getByTestId('inject-fork'))).toBe(true);
      await expect(app.inject.root.getByTestId('inject-text').count()).resolves.toBe(0);
      await expect(app.inject.root.getByTestId('override-send').count()).resolves.toBe(0);
      await app.screenshot(`stop-before-tool-${tag}-ended-inject`);
      expect(app.errors).toEqual([]);
    });
  }
});

describe('web mode: pause before the answer reaches the agent, edit it', () => {
  const web = servedApp();

  it('at 1280x800: the model answer shows before the agent gets it; the edited answer is what the step does', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    await app.library.startTask('hello-python');
    await app.page.getByTestId('episode-state').waitFor({ timeout: 60_000 });
    await app.settled();
    await app.page.getByTestId('stop-before-answer').check();
    await app.page.keyboard.press('F10');
    const card = app.inspector.root.locator('[data-testid="held-action"][data-stage="before_answer"]');
    await card.waitFor({ timeout: 60_000 });
    await expect(card.locator('h3').textContent()).resolves.toContain(
      "Paused before the agent gets step 1's answer",
    );
    await expect(card.getByTestId('held-content').innerText()).resolves.toContain(
      "I'll start by looking at the workspace.",
    );
    await expect(card.getByTestId('held-call').innerText()).resolves.toMatch(
      /The answer asks to run: list_dir/,
    );
    await card.getByTestId('held-edit-answer').click();
    const editor = card.getByTestId('held-editor');
    await expect(editor.inputValue()).resolves.toContain('"name": "list_dir"');
    await editor.fill(
      JSON.stringify({
        content: 'A person answered instead.',
        tool_calls: [
          { id: 'call_1', function: { name: 'execute_shell', arguments: { command: 'echo ANSWER-EDITED' } } },
        ],
      }),
    );
    await card.getByTestId('held-save').click();
    // Saved, not yet given: the card shows the edited answer and says it was edited.
    await card.getByTestId('held-edited').waitFor({ timeout: 10_000 });
    await expect(card.getByTestId('held-call').innerText()).resolves.toContain('echo ANSWER-EDITED');
    await app.screenshot('stop-before-answer-1280x800-edited');
    await card.getByTestId('held-run').click();
    await app.timeline.waitForStep(1);
    await app.settled();
    await app.inspector.waitForStep(1);
    await expect(app.inspector.root.getByTestId('inspector-edit').innerText()).resolves.toMatch(
      /You changed the model's answer before the agent got it; the model had said: “I'll start by looking at the workspace\.” · list_dir/,
    );
    await app.inspector.tab('output');
    await app.inspector.root
      .getByTestId('inspector-stdout')
      .filter({ hasText: 'ANSWER-EDITED' })
      .waitFor({ timeout: 20_000 });
    await app.screenshot('stop-before-answer-1280x800-result');
    expect(app.errors).toEqual([]);
  });
});

describe('web mode: a breakpoint on the exact request', () => {
  const web = servedApp();

  it('at 1024x700: "a message matches" pauses before the answer; a bad pattern is refused in words', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const bps = new BreakpointsSection(app.page);
    await app.library.startTask('hello-python');
    await app.page.getByTestId('episode-state').waitFor({ timeout: 60_000 });
    await app.settled();
    await bps.add('request_match', '(argv');
    await expect(bps.root.getByTestId('breakpoint-message').innerText()).resolves.toMatch(
      /That pattern will not do: "\(argv" is not a regular expression/,
    );
    // The agent's fourth request holds the IndexError of step 3's run: pause there, before the answer.
    await bps.add('request_match', 'IndexError');
    await expect(bps.items()).resolves.toEqual([
      'Pause before the answer, when a message matches /IndexError/',
    ]);
    await app.page.keyboard.press('F5');
    const card = app.inspector.root.locator('[data-testid="held-action"][data-stage="before_answer"]');
    await card.waitFor({ timeout: 60_000 });
    await expect(card.locator('h3').textContent()).resolves.toContain("step 4's answer");
    await expect(card.getByTestId('held-why').innerText()).resolves.toMatch(
      /Your breakpoint fired: message \d+ \(tool\) matches \/IndexError\//,
    );
    // Which breakpoint stopped it, in full above the card (at 1024 px, not cut in the toolbar).
    const reason = app.page.getByTestId('stop-reason');
    // The notice names the breakpoint; the card under it says the rest (not said twice).
    await expect(reason.innerText()).resolves.toBe(
      'paused at a breakpoint (before the answer, when a message matches /IndexError/)',
    );
    // The breakpoint form fits its column: the long kind shortens inside its select.
    expect(await new LayoutObject(app.page).readable(bps.root.getByTestId('breakpoint-kind'))).toBe(true);
    expect(await new LayoutObject(app.page).readable(reason)).toBe(true);
    expect(await app.timeline.lastStep()).toBe(4);
    await app.screenshot('request-breakpoint-1024x700');
    await bps.remove('before the answer, when a message matches /IndexError/');
    await card.getByTestId('held-run').click();
    await app.inspector.waitForStep(4);
    await app.settled();
    expect(app.errors).toEqual([]);
  });
});
