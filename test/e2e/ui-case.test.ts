import { describe, expect, it } from 'vitest';
import { servedApp, until, watchTexts } from '../support/e2e';

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
    const flagged = await until(
      () => app.timeline.flaggedSteps('loop'),
      (steps) => steps.length > 0,
      30_000,
      'loop flag in the timeline',
    );
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
});
