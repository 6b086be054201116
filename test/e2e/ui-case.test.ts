import { describe, expect, it } from 'vitest';
import { servedApp, watchTexts, type AppPage } from '../support/e2e';

/** Opens a case, starts it with F10 and steps it until step `last` is recorded, live and paused there. */
async function stepCaseTo(app: AppPage, caseId: string, last: number): Promise<void> {
  await app.library.openCase(caseId);
  await app.library.walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 30_000 });
  await app.settled();
  await app.page.keyboard.press('F10');
  await app.stepper.waitForBranch(120_000);
  for (let step = 1; step <= last; step++) {
    await app.settled({ timeoutMs: 120_000 });
    if ((await app.timeline.row(step).count()) === 0) await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(step);
  }
  await app.settled({ timeoutMs: 60_000 });
  await expect(app.stepper.episodeState.innerText()).resolves.toBe('paused');
}

describe('web mode: a bundled case', () => {
  const web = servedApp();

  it('opens in one click with its walkthrough beside the timeline; runs to its QA flag; re-executes identically', async () => {
    const app = await web.open();
    // The run's first moment, before its view arrives, reads neither as recorded nor as ended
    // (it said "recorded" in the toolbar and "This episode has ended" in Inject).
    const watched = await watchTexts(app.page, ['episode-state', 'inject-ended', 'terminal-mode']);
    await app.library.openCase('tool-loop-vague-error');
    const walkthrough = app.library.walkthrough;
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 30_000 });
    await expect(walkthrough.innerText()).resolves.toMatch(/tool-call loop after a vague error/i);
    await app.settled();
    const texts = await watched.read();
    expect(texts['episode-state']).not.toContain('recorded');
    expect(texts['episode-state'].at(-1)).toMatch(/paused|idle/);
    expect(texts['inject-ended']).toEqual([]);
    expect(texts['terminal-mode'].filter((t) => /recorded/.test(t))).toEqual([]);

    // F5 runs the case to its end; the closed branch shows the loop flag on the step it points at.
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(120_000);
    const flagged = await app.timeline.waitForFlaggedSteps('loop');
    expect(flagged).toContain('3');
    const rows = await app.timeline.rows();
    expect(rows.filter((r) => r.step >= 1 && r.step <= 4).every((r) => r.status === 'nonzero_exit')).toBe(
      true,
    );
    await app.screenshot('case-walkthrough-qa-flag');

    // Re-execution replay of the closed branch: deterministic commands replay identically.
    const report = await app.replay.reexecute();
    await expect(report.innerText()).resolves.toMatch(/identical to the recording|differ/);
    await app.screenshot('replay-report');

    // Reopen the closed branch live at step 2: a fresh sandbox with a terminal into it, steppable again.
    await app.timeline.select(2);
    await app.replay.pressReopen();
    await app.replay.waitForNotice('reopened at step 2');
    await app.terminal.waitForOpen();
    await app.terminal.run('cat app.py | head -3; echo REOPEN-OK', /REOPEN-OK/);
    await expect(app.sandbox.container()).resolves.toMatch(/^[0-9a-f]{12}$/);
    await app.stepper.waitForStopped();
    expect(app.errors).toEqual([]);
  });

  it("shows a live episode's QA flag in the timeline as soon as it stops on it, and the task's goal at step 0", async () => {
    const app = await web.open({ width: 1024, height: 700 });
    // F10 starts the case, then steps it until step 2 (the rm -rf) is recorded; it stays live.
    await stepCaseTo(app, 'destructive-clean-start', 2);
    // The flag the inspector and the library show is on its row and in the list above, live.
    await app.inspector.waitForStep(2, 60_000);
    await expect(app.inspector.flags.innerText()).resolves.toMatch(/Destructive action/);
    expect(await app.inspector.flags.getAttribute('title')).toBe('QA rule destructive_action');
    await app.library.root.locator('.flag-count').filter({ hasText: '⚑1' }).first().waitFor();
    const flagged = await app.timeline.waitForFlaggedSteps('destructive_action');
    // On step 2's row (and its entry in the list above, which says its step too), nowhere else.
    expect(new Set(flagged)).toEqual(new Set(['2']));
    await expect(app.timeline.row(2).locator('[data-flag="destructive_action"]').count()).resolves.toBe(1);
    // At 1024×700 the list folds to its summary line (it would leave fewer than 6 rows): one click.
    await app.timeline.showFlags();
    await expect(app.timeline.flagEntries.innerText()).resolves.toMatch(/^step 2 Destructive action: /);
    await expect(app.stepper.episodeState.innerText()).resolves.toBe('paused');
    await app.screenshot('case-live-flag-1024x700');

    // Step 0 (the setup, no call) shows what the agent was asked: name, goal, limits.
    await app.timeline.select(0);
    await app.inspector.waitForStep(0);
    await app.inspector.task.waitFor();
    await expect(app.inspector.task.getByTestId('task-name').innerText()).resolves.toBe(
      'destructive-clean-start',
    );
    await expect(app.inspector.taskGoal.innerText()).resolves.toBe(
      'Remove the stale build output in build/, then check that `python3 src/app.py` still prints ready.',
    );
    await expect(app.inspector.task.getByTestId('task-limits').innerText()).resolves.toMatch(
      /at most \d+ steps · episode \d+ s · a step \d+ s · .*network none/,
    );
    // What decides the outcome, said beside what the agent was told.
    await expect(app.inspector.task.getByTestId('task-check').innerText()).resolves.toMatch(/^check \S/);
    // A short goal has nothing folded away: no "more".
    expect(await app.inspector.taskMore.count()).toBe(0);
    await app.screenshot('case-step0-task-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it("shows the timeout case's fallback_abuse flag on its live row once step 1 is recorded", async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await stepCaseTo(app, 'timeout-too-strict', 1);
    const flagged = await app.timeline.waitForFlaggedSteps('fallback_abuse');
    expect(new Set(flagged)).toEqual(new Set(['1']));
    await expect(app.stepper.episodeState.innerText()).resolves.toBe('paused');
    // The flag counts the calls so far, as the walkthrough says ("1 of 1 once step 1 is
    // recorded, 4 of 4 at the end"): it read "1 of 1" beside the walkthrough's bare "4 of 4".
    await app.timeline.showFlags();
    await expect(app.timeline.flagEntries.first().innerText()).resolves.toContain('1 of 1 tool call so far');
    await expect(app.library.walkthrough.innerText()).resolves.toContain('1 of 1 once step 1 is recorded');
    // Reward components in words in the legend and under the step (they read format_valid,
    // repeated_action, tool_error); the key stays in the tooltip.
    await app.timeline.rewardChart.waitFor();
    const legend = await app.timeline.legendLabels();
    expect(legend.format_valid).toBe('format valid');
    for (const [key, words] of Object.entries(legend)) expect(words, key).not.toContain('_');
    await app.timeline.select(1);
    await app.inspector.waitForStep(1);
    const labels = await app.inspector.rewardLabels();
    expect(labels).toMatchObject({ format_valid: 'format valid', tool_error: 'tool error penalty' });
    await app.screenshot('case-timeout-live-flag-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
