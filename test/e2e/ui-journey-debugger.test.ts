import { describe, expect, it } from 'vitest';
import { LayoutObject, runCase, servedApp, until, type AppPage } from '../support/e2e';

async function stopReason(app: AppPage): Promise<string> {
  return app.stepper.stopReason.innerText();
}

describe('web mode: a case walked with breakpoints, the keyboard and a small window', () => {
  const web = servedApp();

  it('at 1024×700: walkthrough beside a full timeline, conditional breakpoints pause the run, Escape leaves the terminal, Tab reaches every panel', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const bps = app.breakpoints;
    await app.library.openCase('tool-loop-vague-error');
    const walkthrough = app.library.walkthrough;
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 30_000 });
    await app.settled({ timeoutMs: 60_000 });
    // The walkthrough is a drawer in the left column: its close button is on screen and the timeline keeps its width.
    expect(await layout.onScreen(walkthrough.getByRole('button', { name: 'close walkthrough' }))).toBe(true);
    expect((await layout.box('timeline'))!.width).toBeGreaterThanOrEqual(380);
    await app.screenshot('journey-debugger-1024x700-case-open');

    // Breakpoints from the window: a value is asked for in words, conditions are listed in words.
    await bps.add('step', '');
    await expect(bps.root.getByTestId('breakpoint-message').innerText()).resolves.toBe(
      'Enter the step first.',
    );
    await bps.add('tool', 'execute_shell');
    await bps.add('nonzero_exit');
    await expect(bps.items()).resolves.toEqual([
      'Pause before execute_shell runs',
      'Pause when a command exits non-zero',
    ]);
    await bps.remove('before execute_shell runs');
    await expect(bps.items()).resolves.toEqual(['Pause when a command exits non-zero']);

    // Escape leaves the live terminal; the next Tab goes on to the controls after it.
    await app.terminal.root
      .getByTestId('terminal-mode')
      .filter({ hasText: 'open' })
      .waitFor({ timeout: 60_000 });
    await app.terminal.run('echo IN-TERMINAL', 'IN-TERMINAL');
    await app.page.keyboard.press('Escape');
    await until(
      () => layout.focused(),
      (f) => f.panel !== 'terminal',
      5_000,
      'focus out of the terminal',
    );
    await app.page.keyboard.press('Tab');
    expect((await layout.focused()).panel).not.toBe('terminal');
    // Escape was not typed into the shell, and the shell still works after coming back.
    await app.terminal.run('echo BACK-IN', 'BACK-IN');

    // F5 runs on; the condition pauses after step 1, whose command exited 1.
    await app.page.keyboard.press('F5');
    await until(
      () => stopReason(app).catch(() => ''),
      (t) => t.includes('breakpoint'),
      120_000,
      'a breakpoint',
    );
    await expect(stopReason(app)).resolves.toMatch(
      /paused at a breakpoint \(when a command exits non-zero\): execute_shell exited 1/,
    );
    // Read whole at 1024 px: the sentence wraps above the inspector instead of ending in "…".
    expect(await layout.readable(app.stepper.stopReason)).toBe(true);
    expect(await layout.readable(bps.kindField)).toBe(true);
    // The kind chosen reads whole in its select ("when a command exits n" at 1024 wide).
    expect(await layout.fieldTextFits(bps.kindField), 'breakpoint kind').toBe(true);
    // Every hint in an empty field reads whole at this width (no "Search episodes, tasks, ca").
    for (const [id, field] of [
      ['library-search', app.library.searchField],
      ['library-agent', app.library.agentField],
      ['timeline-filter-text', app.timeline.filterText],
      ['timeline-goto', app.timeline.gotoField],
      ['batch-agent', app.batches.agentField],
    ] as const)
      expect(await layout.fieldTextFits(field), id).toBe(true);
    await app.settled({ timeoutMs: 30_000 });
    await app.timeline.waitForStep(1);
    expect(await app.timeline.lastStep()).toBe(1);
    await app.screenshot('journey-debugger-1024x700-breakpoint-nonzero');
    await bps.remove('when a command exits non-zero');
    await expect(bps.items()).resolves.toEqual([]);

    // Tab walks every panel without being trapped (Escape when the terminal takes it).
    const panels = new Set<string>();
    const reached = new Set<string>();
    for (let i = 0; i < 160; i++) {
      await app.page.keyboard.press('Tab');
      const f = await layout.focused();
      if (f.panel) panels.add(f.panel);
      if (f.testId) reached.add(f.testId);
      if (f.tag === 'textarea' && f.panel === 'terminal') await app.page.keyboard.press('Escape');
    }
    for (const p of [
      'episode-library',
      'timeline',
      'tool-inspector',
      'inject-panel',
      'replay-controls',
      'terminal',
    ])
      expect([...panels], `Tab reaches ${p}`).toContain(p);
    for (const id of ['btn-step', 'timeline-row', 'inject-text', 'scrubber', 'split-left'])
      expect([...reached], `Tab reaches ${id}`).toContain(id);

    // Run to the end: the QA flag list (folded to one line in the short pane, one click away)
    // jumps to the flagged step.
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(120_000);
    await app.timeline.showFlags();
    const jump = app.timeline.root.locator('[data-testid="flag-jump"][data-flag="loop"]');
    await jump.waitFor({ timeout: 30_000 });
    await expect(jump.getAttribute('data-step')).resolves.toBe('3');
    await jump.click();
    await app.inspector.waitForStep(3);
    expect(await layout.onScreen(app.timeline.row(3))).toBe(true);
    await expect(app.timeline.row(3).getAttribute('aria-selected')).resolves.toBe('true');
    // Opening What-if does not take the timeline's room.
    const before = (await layout.box('timeline'))!.height;
    await app.replay.root.locator('[data-testid="whatif"] > summary').click();
    await app.replay.root.getByTestId('whatif-args').waitFor();
    expect(Math.abs((await layout.box('timeline'))!.height - before)).toBeLessThan(1);
    // Opened, its field and Run button are in the pane's view (they opened under the terminal).
    for (const id of ['whatif-args', 'whatif-run'])
      await until(
        () => layout.unreadable(app.replay.root.getByTestId(id)),
        (why) => why === '',
        5_000,
        `${id} whole in the Replay pane`,
      );
    expect(await layout.onScreen(app.replay.root.getByTestId('whatif-run'))).toBe(true);
    await app.screenshot('journey-debugger-1024x700-flag-jump-whatif');
    expect(app.errors).toEqual([]);
  });

  it('at 1920×1080 the same case shows its walkthrough, flags and timeline side by side', async () => {
    const app = await web.open({ width: 1920, height: 1080 });
    const layout = new LayoutObject(app.page);
    await runCase(app, 'tool-loop-vague-error');
    await app.timeline.root.locator('[data-testid="flag-jump"][data-flag="loop"]').click();
    await app.inspector.waitForStep(3);
    const timeline = (await layout.box('timeline'))!;
    expect(timeline.width).toBeGreaterThan(700);
    expect(await layout.onScreen(app.library.walkthrough)).toBe(true);
    await app.screenshot('journey-debugger-1920x1080-case-flag');
    expect(app.errors).toEqual([]);
  });

  it('a manual decision names a tool the task has before it is queued; a failed start shows under the field it names', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    // A bad agent spec: the error shows under the Agent field (the field to fix; not under the
    // task clicked), and goes when the spec changes.
    await app.library.agentField.fill('nonsense:agent');
    await app.library.startTask('hello-python');
    const startError = app.library.startFieldError;
    await startError.filter({ hasText: 'nonsense' }).waitFor({ timeout: 30_000 });
    expect(await new LayoutObject(app.page).onScreen(startError)).toBe(true);
    await expect(app.library.startError('hello-python').count()).resolves.toBe(0);
    await app.library.agentField.fill('manual');
    await expect(startError.count()).resolves.toBe(0);
    await app.library.startTask('hello-python');
    await app.settled({ timeoutMs: 60_000 });
    await app.inject.root.getByTestId('decide-tool').fill('excute_shell');
    await expect(app.inject.root.getByTestId('decide-unknown-tool').innerText()).resolves.toMatch(
      /This task has no tool “excute_shell”\. Its tools: .*execute_shell/,
    );
    await expect(app.inject.root.getByTestId('decide-send').isDisabled()).resolves.toBe(true);
    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await expect(app.inject.root.getByTestId('decide-unknown-tool').count()).resolves.toBe(0);
    await expect(app.inject.root.getByTestId('decide-send').isEnabled()).resolves.toBe(true);
    await app.screenshot('journey-manual-tool-check');
    expect(app.errors).toEqual([]);
  });
});
