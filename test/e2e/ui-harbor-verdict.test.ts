import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { SCREENSHOTS, servedApp } from '../support/e2e';
import { openShared } from '../support/share';

const HELLO = resolve('test/fixtures/harbor/dataset/hello-file');

const VERDICT = 'verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt';

/**
 * A Harbor task run with `oracle` in the window: its end tells the verifier's result and the
 * reward it wrote, as `stepbox show` does (the window said only "succeeded: solution ran.");
 * what the verifier printed is under the end's Details, the timeline's last row and the reward
 * chart's legend say the verifier's reward, and the shared file and `stepbox show` tell the same
 * verdict. Screenshots: `harbor-verdict-*.png`.
 */
describe('web mode: a Harbor verifier’s reward where the end is told', () => {
  const web = servedApp();

  it('oracle on hello-file: "verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt"', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const { library } = app;
    await library.waitForTasks();
    await library.openProject(HELLO);
    const item = library.project(HELLO);
    await library.agentField.fill('oracle');
    // The Agent heads the sample tasks and the projects both (it sat under "Sample tasks" and
    // drove this project's Start unsaid): its own heading, and the project says it beside Start.
    await expect(library.agentHeading.innerText()).resolves.toBe('AGENT');
    await expect(library.agentApplies.innerText()).resolves.toBe(
      'for a sample task’s ▶ and a project’s Start, below (a case runs its own)',
    );
    await expect(library.projectAgent(HELLO).innerText()).resolves.toBe('with oracle');
    await item.scrollIntoViewIfNeeded();
    await app.screenshot('harbor-verdict-agent-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    await app.screenshot('harbor-verdict-agent-1920x1080');
    await app.resize({ width: 1024, height: 700 });
    await item.getByTestId('project-start').click();
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(180_000);
    const end = app.page.getByTestId('end-reason');
    await end.filter({ hasText: 'Verifier passed' }).waitFor({ timeout: 60_000 });
    expect(await end.innerText()).toContain(
      'Verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt.',
    );
    // What the verifier printed (test_outputs.py's line), under the end line's Details.
    expect(await app.stepper.readVerifierOutput()).toContain('hello.txt is right');
    await app.screenshot('harbor-verdict-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    // The last row's reward says the verifier's part beside its step's own; the legend names it.
    const last = await app.timeline.lastStep();
    await expect(app.timeline.verifierReward.innerText()).resolves.toBe('+1.00');
    expect(await app.timeline.rewardAt(last).getAttribute('title')).toContain(
      `the verifier's final reward 1.00 (${VERDICT})`,
    );
    expect((await app.timeline.legendLabels()).verifier).toBe(`verifier's reward 1.00 (step ${last})`);
    await app.screenshot('harbor-verdict-1920x1080');

    // Share… → the HTML file tells the same verdict, the verifier's output under its Details.
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-verdict-'));
    try {
      const downloading = app.page.waitForEvent('download');
      await app.timeline.shareButton.click();
      const file = join(dir, 'shared.html');
      await (await downloading).saveAs(file);
      const browser = app.page.context().browser();
      if (!browser) throw new Error('the window’s page has no browser to open the shared file in');
      const shared = await openShared(browser, file);
      expect(await shared.verdict.innerText()).toContain(
        'Verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt · final reward 1.00.',
      );
      expect(await shared.readVerifierOutput()).toContain('hello.txt is right');
      await shared.page.screenshot({ path: join(SCREENSHOTS, 'harbor-verdict-shared-1280x800.png') });
      expect(shared.errors).toEqual([]);
      await shared.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // `stepbox show` of the same branch: the same words, and what the verifier printed.
    const show = await runCli(['show', await app.stepper.branch()], { env: { STEPBOX_HOME: web.home() } });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`  ${VERDICT}  `);
    expect(show.stdout).toContain('the verifier printed:\n  hello.txt is right');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});
