import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi, wireCall } from '../support/fake-openai';
import { LayoutObject, runCase, servedApp, until, watchTexts, type AppPage } from '../support/e2e';

/** The two sizes every end is looked at in: the smallest window and a common large one. */
const BOTH_SIZES = [
  { width: 1024, height: 700 },
  { width: 1920, height: 1080 },
] as const;

/** Starts the bundled hello-python sample (scripted agent) and waits for step 0. */
async function startHello(app: AppPage): Promise<void> {
  await app.library.startTask('hello-python');
  await app.stepper.episodeState.waitFor({ timeout: 60_000 });
  await app.terminal.root
    .getByTestId('terminal-mode')
    .filter({ hasText: 'open' })
    .waitFor({ timeout: 60_000 });
}

/** Waits until the stepper is stopped (idle or paused) with no call in flight. */
/** Presses F10 and waits for the step to complete and the stepper to pause again. */
async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ timeoutMs: 60_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step);
  await app.settled({ timeoutMs: 60_000 });
}

/** `stty size` in the live terminal, as [rows, cols]. */
async function sttySize(app: AppPage, marker: string): Promise<[number, number]> {
  const text = await app.terminal.run(
    `echo ${marker}-$(stty size | tr ' ' x)`,
    new RegExp(`\\n${marker}-\\d+x\\d+`),
  );
  const m = new RegExp(`\\n${marker}-(\\d+)x(\\d+)`).exec(text);
  return [Number(m?.[1]), Number(m?.[2])];
}

describe('web mode: a live episode on Docker', () => {
  const web = servedApp();

  it('stops at a breakpoint; the terminal is a real TTY that follows resizes; the inspector shows the call in Monaco', async () => {
    const app = await web.open();
    const watched = await watchTexts(app.page, ['terminal-mode']);
    await startHello(app);
    // Until the shell's first output the header says it is connecting, not "open · Enter or click
    // to type" over an empty pane (several *-start-* shots); once it says so, the prompt is there.
    const modes = (await watched.read())['terminal-mode'];
    expect(modes).toContain('connecting…');
    expect(modes.indexOf('connecting…')).toBeLessThan(modes.indexOf('open · Enter or click to type'));
    await until(
      () => app.terminal.screen(),
      (t) => t.trim() !== '',
      5_000,
      'the shell prompt under "open"',
    );
    await app.screenshot('terminal-start-open-1600x1000');
    await stepTo(app, 1);
    // F9 with nothing selected arms the next step; F5 runs to it.
    await app.page.keyboard.press('F9');
    await app.page.keyboard.press('F5');
    await app.stepper.stopReason.filter({ hasText: 'breakpoint' }).waitFor({ timeout: 60_000 });
    await expect(app.stepper.episodeState.innerText()).resolves.toBe('paused');
    expect(await app.timeline.lastStep()).toBe(2);

    // The terminal: a TTY into the live sandbox, typed into while F-keys stay the debugger's.
    const out = await app.terminal.run('echo $((6*7)); tty', /\n42\n\/dev\/pts\/\d+/);
    expect(out).toMatch(/\/dev\/pts\/\d+/);
    const before = await app.terminal.size();
    expect(await sttySize(app, 'A')).toEqual([before.rows, before.cols]);
    await app.page.setViewportSize({ width: 1300, height: 880 });
    const after = await until(
      () => app.terminal.size(),
      (s) => s.cols !== before.cols,
      10_000,
      'xterm refit',
    );
    expect(await sttySize(app, 'B')).toEqual([after.rows, after.cols]);
    await app.page.setViewportSize({ width: 1600, height: 1000 });

    // The debugger keys work while the terminal has focus, and never reach the shell.
    await app.terminal.focus();
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(3);
    await app.settled({ timeoutMs: 60_000 });
    const shell = await app.terminal.run('echo KEYS-OK', /\nKEYS-OK/);
    // A flood of output (~590 KB) arrives whole through the batched, acknowledged stream.
    const flood = await app.terminal.run('seq 1 100000; echo FLOOD-DONE', /\nFLOOD-DONE/, 60_000);
    expect(flood).toMatch(/\n99999\n100000\nFLOOD-DONE/);
    expect(shell).not.toMatch(/\[21~|\[15~/);

    // The inspector: step 2's arguments and result as Monaco models; its file diff.
    await app.timeline.select(2);
    await app.inspector.waitForStep(2);
    const args = JSON.parse(await app.inspector.model('arguments.json', (v) => v.includes('greet.py')));
    expect(args.path).toBe('greet.py');
    expect(args.content).toContain('sys.argv[2]');
    expect(JSON.parse(await app.inspector.model('result.json', (v) => v.includes('"ok"')))).toMatchObject({
      ok: true,
    });
    // The sandbox panel: the live container and a sample from its stats stream, read against the
    // task's 1 GiB (the cgroup's limit adds the tmpfs mounts' sizes: it read "/ 2816 MiB").
    await app.sandbox.root
      .getByTestId('sandbox-memory')
      .filter({ hasText: /\d+(\.\d)?\sMiB \/ 1\sGiB \(\d+%\)/ })
      .waitFor({ timeout: 30_000 });
    await expect(app.sandbox.container()).resolves.toMatch(/^[0-9a-f]{12}$/);
    await app.screenshot('live-breakpoint-terminal-inspector');
    await app.inspector.tab('files');
    expect(await app.inspector.model('diff-after', (v) => v.includes('argv'))).toContain('sys.argv[2]');
    await app.screenshot('inspector-file-diff');
    await app.inspector.tab('call');
    // F10 while step 2 is read (step 3 is the latest): the view follows the step taken, as a
    // debugger's current line does; it stayed on step 2 and the step seemed to do nothing.
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(4);
    await app.inspector.waitForStep(4);
    await app.timeline.selectedRow(4).waitFor({ timeout: 10_000 });
    expect(app.errors).toEqual([]);
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.episodeState.filter({ hasNotText: /paused|idle|running/ }).waitFor({ timeout: 60_000 });
    await app.page.close();
  });

  it('rolls the sandbox back to an earlier step: its files in the live terminal, its recorded output in history', async () => {
    const app = await web.open();
    await startHello(app);
    for (let k = 1; k <= 5; k++) await stepTo(app, k);
    expect((await app.timeline.rows()).find((r) => r.step === 3)?.status).toBe('nonzero_exit');
    await app.terminal.run('cat greet.py', /sys\.argv\[1\]/);

    await app.timeline.select(2);
    await app.replay.rollback();
    await app.terminal.run('clear; echo G=$(grep -c "argv\\[2\\]" greet.py)', /G=1\b/);
    const files = await app.terminal.screen();
    expect(files).not.toMatch(/argv\[1\]/);

    // History: step 1's recorded output in the terminal, its call in the inspector.
    await app.timeline.select(1);
    await expect(app.terminal.mode()).resolves.toBe('history');
    const recorded = await until(
      () => app.terminal.screen('history'),
      (t) => t.includes('step 1 (recorded)'),
      15_000,
      'recorded output of step 1',
    );
    // The call as a person reads it, not `$ list_dir {"path":"."}` (it is no shell command).
    expect(recorded).toContain('» list_dir .');
    expect(recorded).not.toContain('{"path"');
    await app.inspector.waitForStep(1);
    await app.screenshot('rollback-history');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('forks from a step (the branch shows in the library) and runs a what-if that leaves the live sandbox unchanged', async () => {
    const app = await web.open();
    await startHello(app);
    for (let k = 1; k <= 3; k++) await stepTo(app, k);
    const parent = await app.page.evaluate(() =>
      document.querySelector('.branch-node.current')?.getAttribute('data-branch'),
    );

    await app.timeline.select(2);
    await app.replay.fork();
    const branches = await until(
      () => app.library.branches(),
      (b) => b.length >= 2,
      30_000,
      'fork in library',
    );
    const fork = branches.find((b) => b !== parent);
    expect(fork).toBeTruthy();
    await app.page
      .locator(`[data-testid="branch-node"][data-branch="${fork}"].current`)
      .first()
      .waitFor({ timeout: 30_000 });
    await app.terminal.root
      .getByTestId('terminal-mode')
      .filter({ hasText: 'open' })
      .waitFor({ timeout: 60_000 });
    await app.screenshot('fork-in-library');

    // The live sandbox's tree hash, and its processes outside this terminal, before and after the what-if.
    const probe =
      'echo H=$(cd /workspace && find . -type f | sort | xargs sha256sum | sha256sum | cut -c1-16) P=$(ps -eo tty=,comm= | awk \'$1=="?" && $2!="sleep" {print $2}\' | sort | tr "\\n" ,)';
    const state = async (tag: string) => {
      const t = await app.terminal.run(
        `clear; ${probe.replace('echo ', `echo ${tag} `)}`,
        new RegExp(`(?:^|\\n)${tag} H=\\w+ P=`),
      );
      return new RegExp(`(?:^|\\n)${tag} (H=\\w+ P=\\S*)`).exec(t)?.[1] ?? '';
    };
    const liveBefore = await state('S1');
    await app.timeline.select(2);
    await app.inspector.waitForStep(2);
    const observation = await app.replay.whatIf({ path: 'whatif.txt', content: 'what if\n' });
    expect(observation).toMatch(/whatif\.txt/);
    // No tree hash in the text a person reads: it is the note's tooltip.
    const said = await app.replay.whatIfResult.innerText();
    expect(said).toContain('observation (live sandbox untouched)');
    expect(said).not.toMatch(/\btree\b|[0-9a-f]{12}/);
    expect(await app.replay.whatIfResult.getByTestId('whatif-note').getAttribute('title')).toMatch(
      /^workspace tree hash after: [0-9a-f]+/,
    );
    const liveAfter = await state('S2');
    expect(liveAfter).toBe(liveBefore);
    await app.terminal.run('clear; ls /workspace; echo LS-DONE', /LS-DONE/);
    expect(await app.terminal.screen()).not.toContain('whatif.txt');
    await app.screenshot('what-if');

    // Compare the fork with its parent step by step: the parent's step 3 has no counterpart.
    await app.replay.root.locator('[data-testid="whatif"] > summary').click();
    await app.sideBySide.openCompare();
    await app.sideBySide.compareWith(parent as string);
    const table = app.sideBySide.root.getByTestId('compare-table');
    await table.waitFor({ timeout: 60_000 });
    const cmp = await table
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => ({ step: tr.getAttribute('data-step'), text: (tr as HTMLElement).innerText })),
      );
    expect(cmp.map((r) => r.step)).toEqual(['1', '2', '3']);
    expect(cmp[2].text).toContain('python3 greet.py');
    await table.scrollIntoViewIfNeeded();
    await app.screenshot('compare-branches');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('a model server that is not up: the episode ends in an error said in the window’s words, no agent flag, Replay says what can be done; Save as case refuses a bad name once, beside it (walk shots 64–65, 104–106)', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.waitForTasks();
    // Port 1: nothing listens; the agent's retries give up in a few seconds.
    await app.library.chooseAgent('openai:gpt-4o-mini@http://127.0.0.1:1/v1');
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    await app.page.keyboard.press('F10');
    await app.stepper.waitForEnd(120_000);
    await app.settled({ ended: true, timeoutMs: 60_000 });
    // The endpoint's failure is the episode's status, not the agent's misbehaviour.
    await expect.poll(() => app.page.locator('body').innerText()).toMatch(/This episode ended in an error/);
    // What the server's failure was and what to check, in one sentence above the inspector, whole
    // (the end said only "the model endpoint kept failing"; the message was in the trace alone).
    await expect
      .poll(() => app.stepper.endReason.innerText())
      .toBe(
        'This episode ended in an error: the model endpoint http://127.0.0.1:1/v1 failed: Connection error. Check the server is up (its address comes after @ in the agent, openai:MODEL@URL, or from OPENAI_BASE_URL) and the model name.',
      );
    const layout = new LayoutObject(app.page);
    expect(await layout.unreadable(app.stepper.endReason)).toBe('');
    expect(await app.timeline.flagEntries.count()).toBe(0);
    // The error mark says it in words, read whole (it showed the code cut, "model_er…"), on step
    // 1's row: the call that failed was step 1's (it sat on step 0's, the setup, which went fine).
    expect(await app.timeline.row(0).getByTestId('row-error').count()).toBe(0);
    const mark = app.timeline.row(1).getByTestId('row-error');
    await expect(mark.innerText()).resolves.toBe('model failed');
    expect(await layout.readable(mark)).toBe(true);
    const words = await app.page.locator('body').innerText();
    expect(words).not.toContain('--base-url');
    expect(words).not.toMatch(/error\.\./);
    // Replay's words match what can be done: Step and Continue are off, so it does not say to use
    // them; candidates would call the endpoint again, so they are not offered.
    const replay = await app.replay.root.innerText();
    expect(replay).not.toMatch(/Take one \(Step, F10\)/);
    await expect(app.replay.candidatesButton.getAttribute('data-why')).resolves.toMatch(
      /^Candidates would each call the model endpoint that failed/,
    );
    // The way on is said once, in Replay, with one button (way-on.ts): the endpoint was not
    // reachable, so going on as recorded would call it again. Inject and Sandbox point there in a
    // few words; it was said in all three, each with its own "Fork with another agent…"
    // (model-not-up-ended-*), and Replay's "kept failing" beside "was not reachable" said it twice.
    const way =
      'Its model endpoint was not reachable: going on as recorded would call it again, so fork it with another agent or endpoint.';
    await expect.poll(() => app.replay.root.innerText()).toContain(way);
    expect(await app.replay.root.innerText()).not.toContain('kept failing');
    for (const pane of [app.inject.ended, app.sandbox.none])
      await expect.poll(() => pane.innerText()).toMatch(/Its agent cannot go on as recorded: see Replay\.$/);
    for (const size of BOTH_SIZES) {
      const at = await app.resize(size);
      const body = await app.page.locator('body').innerText();
      expect(body.split('was not reachable').length - 1, at).toBe(1);
      await expect(app.page.getByRole('button', { name: 'Fork with another agent…' }).count()).resolves.toBe(
        1,
      );
      await expect(app.replay.forkOtherButton.innerText()).resolves.toBe('Fork with another agent…');
      expect(await layout.unreadable(app.replay.forkOtherButton), at).toBe('');
      expect(await layout.unreadable(app.replay.root.getByText(way)), at).toBe('');
      expect(await app.inject.forkButton.count()).toBe(0);
      expect(await app.sandbox.reopenButton.count()).toBe(0);
      // The Sandbox pane's sentence whole at rest (its button was under the window's edge).
      expect(await layout.contentHidden(app.sandbox.root.locator('.panel-body'))).toBe('');
      await app.screenshot(`model-not-up-ended-${at}`);
    }
    await app.resize({ width: 1024, height: 700 });
    // It opens the fork settings at step 0, where another agent is named.
    await app.replay.forkOtherButton.click();
    const settings = app.page.getByTestId('fork-settings');
    await settings.waitFor({ timeout: 10_000 });
    expect(await settings.innerText()).toContain('Fork or reopen live at step 0');
    await app.screenshot('model-not-up-fork-other-1024x700');
    // Another agent named: the panes' own Fork and Reopen are back, going on with it.
    await app.replay.agentField.fill('scripted:agent.jsonl');
    await app.page.getByTestId('fork-settings-done').click();
    await app.inject.forkButton.waitFor({ timeout: 10_000 });
    expect(await app.sandbox.reopenButton.innerText()).toBe('Reopen live at step 0');

    // Save as case… (on a case's broken run: QA flags it) with a name it cannot take: one plain
    // message beside the name, none in the bar.
    await runCase(app, 'network-assumed');
    await app.timeline.saveCaseButton.click();
    await app.timeline.saveCaseName.fill('My Case!');
    // Said as it is typed, and Save greyed with that reason (not enabled beside a red line).
    const badName =
      'A case name takes only lowercase letters, digits and - (no spaces or capitals), e.g. “my-case”.';
    const refused = app.page.getByTestId('save-case-refused');
    await expect.poll(() => refused.innerText()).toBe(badName);
    expect(await app.timeline.saveCaseSave.getAttribute('aria-disabled')).toBe('true');
    expect(await app.timeline.saveCaseSave.getAttribute('data-why')).toBe(badName);
    // A click anyway (forced past the greyed state) sends nothing: the dialog stays, the bar empty.
    await app.timeline.saveCaseSave.click({ force: true });
    expect(await app.page.getByTestId('save-case-dialog').count()).toBe(1);
    expect(await app.notices.ofKind('save-case').count()).toBe(0);
    expect(await app.page.locator('body').innerText()).not.toContain('cases.save');
    // Said once: Save focused (after the forced click) repeats no reason of its own beside the
    // line under the field.
    await app.timeline.saveCaseSave.focus();
    await expect(app.page.getByText(badName, { exact: true }).count()).resolves.toBe(1);
    await app.screenshot('save-case-bad-name-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});

describe('web mode: a model endpoint that becomes unreachable after some steps', () => {
  const web = servedApp();
  const model = new FakeOpenAi();
  let baseUrl = '';
  beforeAll(async () => {
    // Two steps answered with a tool call each; then the server is closed (the test does it), so
    // the third request finds nothing listening: the endpoint became unreachable mid-episode.
    let n = 0;
    model.onRequest = () => {
      n += 1;
      const command = `echo endpoint-step-${n}`;
      return {
        message: { content: null, tool_calls: [wireCall(`call_${n}`, 'execute_shell', { command })] },
      };
    };
    baseUrl = await model.start();
  });
  afterAll(() => model.close());

  it('the episode ends in an error: its steps stay listed, the end says once, in plain words, what happened and what to do, nothing claims success', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.waitForTasks();
    await app.library.chooseAgent(`openai:fake-model@${baseUrl}`);
    await app.library.startTask('hello-python');
    await app.stepTo(1);
    await app.stepTo(2);
    await app.settled({ timeoutMs: 60_000 });
    await model.close();
    await app.page.keyboard.press('F10');
    await app.stepper.waitForEnd(120_000);
    await app.settled({ ended: true, timeoutMs: 60_000 });
    expect(model.requests.length).toBe(2);
    // The steps it took are listed, as they ran, with no mark of the failure: the call that failed
    // was step 3's, and its row says so ("model failed" sat on step 2's row, which ran fine).
    const rows = await app.timeline.rows();
    for (const step of [1, 2]) {
      const row = rows.find((r) => r.step === step);
      expect(row?.text, `step ${step}`).toContain(`echo endpoint-step-${step}`);
      expect(row?.status, `step ${step}`).toBe('ok');
      expect(await app.timeline.row(step).getByTestId('row-error').count(), `step ${step}`).toBe(0);
    }
    await expect(app.timeline.row(3).getByTestId('row-error').innerText()).resolves.toBe('model failed');
    // Counted as `list` and `show` count it: two steps done, the third never finished.
    await expect(app.timeline.root.innerText()).resolves.toContain('step 3 unfinished');
    // The end: an error, the endpoint and what to check, in one sentence above the inspector.
    await expect.poll(() => app.stepper.episodeState.innerText()).toBe('error');
    await expect
      .poll(() => app.stepper.endReason.innerText())
      .toBe(
        `This episode ended in an error: the model endpoint ${baseUrl} failed: Connection error. Check the server is up (its address comes after @ in the agent, openai:MODEL@URL, or from OPENAI_BASE_URL) and the model name.`,
      );
    // Its Call tab says what failed (it said "No tool call in step 3.", as of an agent that chose none).
    await app.timeline.row(3).click();
    await app.inspector.waitForStep(3);
    await expect(app.inspector.root.innerText()).resolves.toContain(
      'Step 3 made no tool call: model failed (why: above), so no tool ran and the sandbox did not change.',
    );
    // The way on is Replay's, said once: it became unreachable after the steps it answered (it
    // said "was not reachable", as of an endpoint never up), so fork with another agent or endpoint.
    const way =
      'Its model endpoint became unreachable after step 2: going on as recorded would call it again, so fork it with another agent or endpoint.';
    await expect.poll(() => app.replay.root.innerText()).toContain(way);
    // Candidates ask this episode's own agent, at the endpoint that failed: not offered (pressed, it
    // gave one failure per candidate), the way on said beside it when pointed at or focused.
    const candidatesWhy =
      'Candidates would each call the model endpoint that failed: fork with another agent or endpoint (Fork settings…, “Agent”), then try candidates on the fork.';
    const candidates = app.replay.candidatesButton;
    await expect(candidates.getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(candidates.getAttribute('data-why')).resolves.toBe(candidatesWhy);
    await expect(candidates.getAttribute('aria-describedby')).resolves.toBe('replay-actions-why');
    const layout = new LayoutObject(app.page);
    for (const size of BOTH_SIZES) {
      const at = await app.resize(size);
      // Every disabled button says why in its line, and carries no title saying it again.
      expect(await layout.unexplainedDisabled(), at).toEqual([]);
      await candidates.hover();
      await expect(layout.whySaid.innerText(), at).resolves.toBe(candidatesWhy);
      expect(await layout.unreadable(layout.whySaid), at).toBe('');
      expect(await layout.overlappedControls(layout.whySaid), at).toEqual([]);
      await app.screenshot(`model-lost-candidates-pointed-${at}`);
      // A click anyway opens nothing.
      await candidates.click({ force: true });
      expect(await app.page.locator('[data-testid="side-by-side"][data-view="candidates"]').count(), at).toBe(
        0,
      );
      // The click gave it the focus, which keeps its reason said: the shots below are at rest.
      await app.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      await app.page.mouse.move(0, 0);
      const body = await app.page.locator('body').innerText();
      expect(body.split('became unreachable').length - 1, at).toBe(1);
      expect(body.split('Connection error').length - 1, at).toBe(1);
      // Nothing about this episode claims it went well: no success badge, no final answer, no
      // verifier's pass (the library's case notes tell of other episodes).
      for (const pane of [app.stepper, app.timeline, app.inspector, app.replay, app.inject, app.sandbox])
        expect(await pane.root.innerText(), at).not.toMatch(
          /succeeded|final answer|verifier passed|went well/i,
        );
      expect(await app.library.root.getByTestId('branch-node').first().innerText(), at).toMatch(/error/);
      expect(await layout.unreadable(app.stepper.endReason), at).toBe('');
      expect(await layout.unreadable(app.replay.root.getByText(way)), at).toBe('');
      expect(await layout.unreadable(app.replay.forkOtherButton), at).toBe('');
      expect(await layout.notWhollyInView(app.timeline.row(3)), at).toBe('');
      // The step whose model call failed says so whole in its status column ("incomple…" at 1024).
      await expect(app.timeline.rowStatus(3).innerText(), at).resolves.toBe('incomplete');
      // Its text's own width against its cell's (an overflow of a pixel draws the ellipsis, and
      // scrollWidth, rounded, does not tell it).
      const over = await app.timeline.rowStatus(3).evaluate((el) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return range.getBoundingClientRect().width - el.getBoundingClientRect().width;
      });
      expect(over, at).toBeLessThanOrEqual(0);
      await app.screenshot(`model-lost-ended-${at}`);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
