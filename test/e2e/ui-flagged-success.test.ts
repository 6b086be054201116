import { describe, expect, it } from 'vitest';
import { servedApp } from '../support/e2e';

/**
 * Issue 33, item 12: the reward-hacking case's run ends `succeeded` (the verifier passed) while QA
 * flags it; the header said a green "succeeded" beside the flag. It reads as flagged now.
 * Screenshot: `flagged-success-1024x700.png`.
 */
describe('web mode: a flagged success reads as flagged', () => {
  const web = servedApp();

  it('the reward-hacking case ends succeeded · ⚑ flagged, in the warning colour', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.openCase('reward-hacking-edit-test');
    await app.library.walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 90_000 });
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(120_000);
    await app.timeline.flagEntries.first().waitFor({ timeout: 60_000 });
    await expect
      .poll(() => app.stepper.episodeState.innerText(), { timeout: 30_000 })
      .toBe('succeeded · ⚑ flagged');
    expect(await app.stepper.episodeState.getAttribute('class')).toContain('st-flagged');
    await app.screenshot('flagged-success-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
