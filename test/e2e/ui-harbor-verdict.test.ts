import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { servedApp } from '../support/e2e';

const HELLO = resolve('test/fixtures/harbor/dataset/hello-file');

/**
 * A Harbor task run with `oracle` in the window: its end tells the verifier's result and the
 * reward it wrote, as `stepbox show` does (the window said only "succeeded: solution ran.").
 * Screenshots: `harbor-verdict-*.png`.
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
    await app.screenshot('harbor-verdict-1024x700');
    await app.resize({ width: 1920, height: 1080 });
    await app.screenshot('harbor-verdict-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});
