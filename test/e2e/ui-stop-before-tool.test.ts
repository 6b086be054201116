import { describe, expect, it } from 'vitest';
import { BreakpointsSection, continueToNextHold, LayoutObject, servedApp } from '../support/e2e';

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
      await app.stepper.waitForBranch();
      await app.settled();

      const toggle = app.stepper.stopBeforeTool;
      await toggle.check();
      await expect(toggle.isChecked()).resolves.toBe(true);

      // Step 1: the agent's decided call is on screen, not yet run; "Run it" runs it as decided.
      await app.page.keyboard.press('F10');
      const card = await app.held.waitBeforeTool(1);
      await expect(card.call.innerText()).resolves.toMatch(
        /The agent wants to run: list_dir\s+\{\s+"path": "\."\s+\}/,
      );
      expect(await layout.onScreen(card.runButton)).toBe(true);
      // The card says why it stopped, whole; the toolbar is not left to cut a sentence short:
      // the branch's id and state read whole in it, and the reason is not said twice.
      await expect(card.heading.textContent()).resolves.toContain('Paused before step 1 runs');
      expect(await layout.readable(card.heading)).toBe(true);
      expect(await layout.readable(app.stepper.episodeId)).toBe(true);
      expect(await layout.readable(app.stepper.episodeState)).toBe(true);
      await expect(app.stepper.stopReason.count()).resolves.toBe(0);
      // The held step's row says in a word that it waits for the person.
      const status = app.timeline.rowStatus(1);
      await expect(status.innerText()).resolves.toBe('waiting');
      expect(await layout.readable(status)).toBe(true);
      // A step held before it runs is no step done: the count says so, here and in the library
      // (both said "1 step" of a branch that had finished none).
      await expect(app.timeline.stepCount.innerText()).resolves.toBe('step 1 waiting');
      await app.library
        .branchSteps(await app.stepper.branch())
        .filter({ hasText: /^step 1 waiting$/ })
        .waitFor({ timeout: 10_000 });
      // Counted the one way the scrubber counts: it read "0 steps, 1 waiting" beside "step 1 / 1".
      await expect(app.replay.scrubLabel.innerText()).resolves.toBe('step 1 / 1');
      // The Inject panel's fields take its width (a broken style once left them 170 px wide).
      const [field, pane] = await Promise.all([
        app.inject.messageField.boundingBox(),
        app.inject.root.boundingBox(),
      ]);
      expect(field!.width).toBeGreaterThan(pane!.width * 0.8);
      await app.screenshot(`stop-before-tool-${tag}-held`);
      await card.run();
      await app.timeline.waitForStep(1);
      await app.settled();

      // Steps 2 and 3 with F10: step 3 is `python3 greet.py World`; edit it before it runs.
      await app.page.keyboard.press('F10');
      await card.waitBeforeTool(2);
      await app.settled();
      await app.page.keyboard.press('F10');
      await app.inspector.waitForStep(2);
      await app.settled();
      await app.page.keyboard.press('F10');
      await card.waitBeforeTool(3);
      await expect(card.args.innerText()).resolves.toContain('python3 greet.py World');
      await card.editArguments();
      const editor = card.editor;
      // The editor has the focus: keyboard first.
      await expect(editor.evaluate((el) => el === document.activeElement)).resolves.toBe(true);

      // Arguments the tool's schema refuses: the reason shows beside the editor, nothing runs.
      await card.saveAndRun('{"cmd": "echo nope"}');
      const refusal = card.error;
      await refusal.waitFor({ timeout: 10_000 });
      // In people's words, naming the field and the fix; the buttons greyed with it as their
      // reason until the draft changes (they looked enabled beside the red line).
      const said = await refusal.innerText();
      expect(said).toMatch(
        /execute_shell cannot take these arguments: "command" is missing: give it a string/,
      );
      expect(said).toMatch(/"cmd" is not an argument \(it takes command, timeout\)/);
      expect(said).not.toMatch(/required, expected|unknown argument|allowed:/);
      await expect(card.saveRunButton.isDisabled()).resolves.toBe(true);
      expect(await card.saveRunButton.getAttribute('data-why')).toBe(`Change the text first: ${said}`);
      expect(await layout.onScreen(refusal)).toBe(true);
      // The refusal does not push the buttons out of view: the row stays whole at the
      // inspector's bottom edge (it fell below it at 1024×700).
      expect(await layout.notWhollyInView(card.actions), 'Save and run row').toBe('');
      await app.screenshot(`stop-before-tool-${tag}-refused`);

      // Not JSON yet: said as it is typed; the run button waits.
      await editor.fill('{"command": "echo EDITED-BY-PERSON"');
      await card.syntax.waitFor({ timeout: 5_000 });
      await expect(card.saveRunButton.isDisabled()).resolves.toBe(true);

      await card.saveAndRun('{"command": "echo EDITED-BY-PERSON"}');
      await app.timeline.waitForStep(3);
      await app.settled();
      await app.inspector.waitForStep(3);
      await app.inspector.tab('output');
      await app.inspector.waitForStdout('EDITED-BY-PERSON');
      // The timeline row shows the command that ran, and marks the step as changed by a person.
      const row = await app.timeline.rowAt(3);
      expect(row.text).toContain('echo EDITED-BY-PERSON');
      await expect(app.timeline.row(3).getAttribute('data-edited')).resolves.toBe('true');
      // What the mark means, said once above the rows and on the mark itself (EDIT had no legend).
      await expect(app.timeline.markLegend.innerText()).resolves.toContain('EDIT edited call');
      await expect(app.timeline.row(3).getByTestId('row-edited').getAttribute('title')).resolves.toMatch(
        /^EDIT: a person edited/,
      );
      // The inspector says what the agent had decided, beside what ran.
      await expect(app.inspector.edit.innerText()).resolves.toMatch(
        /You changed the arguments before it ran; the agent had decided: execute_shell [^{]*python3 greet\.py World/,
      );
      // The call as the timeline says it, not its JSON.
      await expect(app.inspector.edit.innerText()).resolves.not.toContain('{"command"');
      await app.screenshot(`stop-before-tool-${tag}-edited-result`);

      // Step 4 (read_file): give its result instead of running it.
      await app.page.keyboard.press('F10');
      await card.waitBeforeTool(4);
      // Three steps done and the fourth waiting ("4 steps" before).
      await app.timeline.stepCount.filter({ hasText: /^step 4 waiting$/ }).waitFor({ timeout: 10_000 });
      await card.replaceResult();
      await card.saveAndRun('GIVEN-BY-A-PERSON');
      await app.inspector.waitForStep(4);
      await app.settled();
      await app.inspector.tab('call');
      await app.inspector.replaced.waitFor({ timeout: 20_000 });
      // The tool did not run: no duration, and the reason beside the dash ("0.0 ms" before), in
      // the facts and the row's time column alike.
      await expect(app.inspector.duration.innerText()).resolves.toBe('— (the tool did not run)');
      await expect(app.timeline.rowDuration(4).innerText()).resolves.toBe('—');
      await expect(app.timeline.rowDuration(4).getAttribute('title')).resolves.toMatch(/did not run/);
      // No run's outcome or exit code for it: "ok (exit 0)" and `"exit_code": 0` read as a
      // command that ran. The facts say whose result it is and what the agent reads.
      await expect(app.inspector.outcome.innerText()).resolves.toBe(
        'given by you — the agent reads it as this call’s result',
      );
      await expect(app.inspector.exitCode.innerText()).resolves.toBe('— (no command ran)');
      const facts = await app.inspector.root.getByTestId('inspector-facts').innerText();
      expect(facts).not.toMatch(/exit 0/);
      await expect(app.inspector.root.locator('.call').innerText()).resolves.not.toMatch(/"exit_code"/);
      await app.screenshot(`stop-before-tool-${tag}-replaced-call`);
      await app.inspector.tab('output');
      await app.inspector.waitForStdout('GIVEN-BY-A-PERSON');
      await expect(app.timeline.row(4).locator('.mark-ovr').count()).resolves.toBe(1);
      // Above the output, as above an edit's: the person gave it, the tool never ran. Without
      // it the typed stdout read as the sandbox's own (only OVR in the timeline said otherwise).
      await expect(app.inspector.override.innerText()).resolves.toMatch(
        /A person gave this result; read_file never ran/,
      );
      expect(await layout.readable(app.inspector.override)).toBe(true);
      await app.screenshot(`stop-before-tool-${tag}-replaced-result`);
      if (size.width === 1024) {
        await app.resize({ width: 1920, height: 1080 });
        expect(await layout.readable(app.inspector.override)).toBe(true);
        await app.screenshot('stop-before-tool-1920x1080-replaced-result');
        await app.resize(size);
      }

      // Turning the stops off: F10 runs a whole step again.
      await toggle.uncheck();
      await app.page.keyboard.press('F10');
      await app.timeline.waitForStep(5);
      await app.settled();
      await expect(card.shown()).resolves.toBe(false);
      await expect(app.timeline.rowStatus(5).innerText()).resolves.not.toBe('waiting');

      // To the end: the Inject panel says in one sentence that nothing can be sent, and offers the fork.
      await app.page.keyboard.press('F5');
      await app.stepper.waitForEnd();
      // How it ended, read whole at this width (not cut after "the agen…" in the toolbar).
      const end = app.stepper.endReason;
      await expect(end.innerText()).resolves.toBe(
        'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0).',
      );
      expect(await layout.readable(end)).toBe(true);
      const ended = app.inject.ended;
      await ended.waitFor({ timeout: 10_000 });
      await expect(ended.innerText()).resolves.toMatch(
        /This episode has ended: nothing can be injected into it\. Fork it to inject there\.\s+Fork at step \d+/,
      );
      expect(await layout.readable(ended.locator('.state'))).toBe(true);
      expect(await layout.onScreen(app.inject.root.getByTestId('inject-fork'))).toBe(true);
      await expect(app.inject.messageField.count()).resolves.toBe(0);
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
    await app.stepper.waitForBranch();
    await app.settled();
    await app.stepper.stopBeforeAnswer.check();
    await app.page.keyboard.press('F10');
    const card = await app.held.waitFor('before_answer');
    await expect(card.heading.textContent()).resolves.toContain(
      "Paused before the agent gets step 1's answer",
    );
    await expect(card.content.innerText()).resolves.toContain("I'll start by looking at the workspace.");
    await expect(card.call.innerText()).resolves.toMatch(/The answer asks to run: list_dir/);
    await card.editAnswer();
    await expect(card.editor.inputValue()).resolves.toContain('"name": "list_dir"');
    await card.save(
      JSON.stringify({
        content: 'A person answered instead.',
        tool_calls: [
          { id: 'call_1', function: { name: 'execute_shell', arguments: { command: 'echo ANSWER-EDITED' } } },
        ],
      }),
    );
    // Saved, not yet given: the card shows the edited answer and says it was edited.
    await card.edited.waitFor({ timeout: 10_000 });
    await expect(card.call.innerText()).resolves.toContain('echo ANSWER-EDITED');
    // The edited text is the person's, not "The model says"; what the model said is still on the card.
    // (The quotes are the <q>'s own, drawn by CSS: not in innerText.)
    await expect(card.content.innerText()).resolves.toMatch(
      /^Your edit of the model's answer: “?A person answered instead\.”?$/,
    );
    await expect(card.original.innerText()).resolves.toMatch(
      /^The model had said: “I'll start by looking at the workspace\.” · list_dir/,
    );
    await app.screenshot('stop-before-answer-1280x800-edited');
    await card.run();
    await app.timeline.waitForStep(1);
    await app.settled();
    await app.inspector.waitForStep(1);
    await expect(app.inspector.edit.innerText()).resolves.toMatch(
      /You changed the model's answer before the agent got it; the model had said: “I'll start by looking at the workspace\.” · list_dir/,
    );
    await app.inspector.tab('output');
    await app.inspector.waitForStdout('ANSWER-EDITED');
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
    await app.stepper.waitForBranch();
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
    const card = await app.held.waitFor('before_answer');
    await expect(card.heading.textContent()).resolves.toContain("step 4's answer");
    await expect(card.why.innerText()).resolves.toMatch(
      /Your breakpoint fired: the \d+th message the model is about to read \(a tool result\) matches \/IndexError\//,
    );
    // Which breakpoint stopped it, in full above the card (at 1024 px, not cut in the toolbar).
    const reason = app.stepper.stopReason;
    // The notice names the breakpoint; the card under it says the rest (not said twice).
    await expect(reason.innerText()).resolves.toBe(
      'paused at a breakpoint (before the answer, when a message matches /IndexError/)',
    );
    // The breakpoint form fits its column: the long kind shortens inside its select, and the
    // kind chosen reads whole in it ("before the answer, when a messa" was cut at 1024 wide).
    expect(await new LayoutObject(app.page).readable(bps.root.getByTestId('breakpoint-kind'))).toBe(true);
    // The QA kind too (its rules in the menu cut it at every width; they are said once it is set).
    await bps.kindField.selectOption('qa');
    expect(await new LayoutObject(app.page).fieldTextFits(bps.kindField), 'the QA kind').toBe(true);
    await bps.kindField.selectOption('request_match');
    expect(await new LayoutObject(app.page).fieldTextFits(bps.kindField), 'the kind chosen').toBe(true);
    expect(await new LayoutObject(app.page).readable(reason)).toBe(true);
    expect(await app.timeline.lastStep()).toBe(4);
    // "Give it to the agent" and "Edit the answer" whole at the inspector's edge (cut in half).
    expect(await new LayoutObject(app.page).notWhollyInView(card.actions), "the card's buttons").toBe('');
    await app.screenshot('request-breakpoint-1024x700');
    await bps.remove('before the answer, when a message matches /IndexError/');
    await card.run();
    await app.inspector.waitForStep(4);
    await app.settled();
    expect(app.errors).toEqual([]);
  });
});

describe('web mode: a final answer runs no tool', () => {
  const web = servedApp();

  it('"Pause before each tool runs" never holds the final answer; under "before answers" its Inject box says no step reads a message', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch();
    await app.settled();
    await app.stepper.stopBeforeTool.check();
    // Continue to each held step and on: every hold is a tool about to run, until the episode ends.
    const next = (prev: string) => continueToNextHold(app, prev);
    const headings: string[] = [];
    for (let i = 0; i < 12; i++) {
      const h = await next(headings.at(-1) ?? '');
      if (h === null) break;
      headings.push(h);
    }
    await app.stepper.waitForEnd(90_000);
    expect(headings.length).toBeGreaterThan(0);
    // It held "PAUSED BEFORE STEP 3 ENDS THE EPISODE" with "before answers" off.
    expect(headings.filter((h) => /ends the episode/i.test(h))).toEqual([]);
    expect(headings.every((h) => /^Paused before step \d+ runs/.test(h))).toBe(true);

    // Under "before answers" the final answer is held, and Inject says what a message would do there.
    await app.library.startTask('hello-python');
    await app.stepper.waitForState('paused', 90_000).catch(() => undefined);
    await app.settled();
    await app.stepper.stopBeforeTool.uncheck();
    await app.stepper.stopBeforeAnswer.check();
    let finalHeld = false;
    let was = '';
    for (let i = 0; i < 12 && !finalHeld; i++) {
      const h = await next(was);
      if (h === null) break;
      was = h;
      finalHeld = (await app.held.root.getByTestId('held-final').count()) > 0;
    }
    expect(finalHeld).toBe(true);
    const step = Number(/step (\d+)'s answer/.exec((await app.held.heading.textContent()) ?? '')?.[1]);
    await app.inject.tab('message').click();
    // Not "What the agent reads at step 4": there is none.
    await expect(app.inject.messageField.getAttribute('placeholder')).resolves.toBe(
      `Nothing injected here is read: step ${step}'s final answer ends the episode, so there is no step ${step + 1}.`,
    );
    // Typed anyway: Inject cannot send, and says why beside it (its aria-describedby line).
    await app.inject.messageField.fill('one more thing');
    const send = app.inject.root.getByTestId('inject-send');
    await expect(send.getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(app.inject.sendWhy.innerText()).resolves.toBe(
      `Step ${step} is the agent's final answer: it ends the episode, so no step after it reads a message. To go on, edit the answer in the paused-step card.`,
    );
    const describedBy = (await send.getAttribute('aria-describedby')) ?? '';
    expect(describedBy.split(' ')).toContain(await app.inject.sendWhy.getAttribute('id'));
    expect(await layout.readable(app.inject.sendWhy)).toBe(true);
    await app.screenshot('final-answer-held-inject-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    expect(await layout.readable(app.inject.sendWhy)).toBe(true);
    await app.screenshot('final-answer-held-inject-1920x1080');
    await app.inject.messageField.fill('');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
  }, 400_000);
});
