import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import {
  LayoutObject,
  launchBrowser,
  openApp,
  removeHome,
  startServe,
  tempHome,
  type Served,
} from '../support/e2e';

let home: string;
let served: Served | undefined;
let browser: Browser | undefined;
let episode: string;

beforeAll(async () => {
  home = tempHome();
  // An episode whose recorded task asks for more memory than the default sandbox.
  const taskDir = join(home, 'wide-task');
  cpSync('resources/tasks/hello-python', taskDir, { recursive: true });
  const task = JSON.parse(readFileSync(join(taskDir, 'task.json'), 'utf8')) as Record<string, unknown>;
  task.sandbox = { limits: { memory: '1536m' } };
  writeFileSync(join(taskDir, 'task.json'), JSON.stringify(task));
  const run = await runCli(
    ['run', taskDir, '--agent', 'scripted:resources/tasks/hello-python/agent.jsonl', '--json'],
    { env: { STEPBOX_HOME: join(home, 'store') }, timeoutMs: 120_000 },
  );
  if (run.code !== 0) throw new Error(run.stderr);
  episode = (JSON.parse(run.stdout) as { episode: string }).episode;
  served = await startServe({ home: join(home, 'store') });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  if (home) removeHome(home);
});

describe('web mode: a recorded task wider than the defaults', () => {
  it('reopen asks first, names what is wider, does nothing on Cancel and reopens on Allow', async () => {
    const app = await openApp(browser!, served!.url, { width: 1024, height: 700 });
    await app.library.openBranch(episode);
    await app.timeline.waitForStep(1);
    await app.timeline.select(1);

    const ask = app.replay.consentAsk;
    await app.replay.pressReopen();
    await ask.waitFor({ timeout: 30_000 });
    // In words, the task file's key on hover (it said `sandbox.limits.memory "1536m" (default "1g")`).
    const asked = await ask.innerText();
    expect(asked).toContain("memory limit 1.5 GiB (stepbox's default: 1 GiB)");
    expect(asked).not.toMatch(/sandbox\.limits|"1g"/);
    await expect(ask.locator('p').getAttribute('title')).resolves.toBe(
      'in the task file: sandbox.limits.memory',
    );
    // Asked, not agreed: the button does not say it is reopening (it read "Reopening…" here);
    // it waits for the person's answer and says so.
    await expect(app.replay.buttonWords('reopen')).resolves.toEqual({
      label: 'Reopen live at step 1',
      why: 'Waiting for your answer to the question above: allow the looser sandbox, or cancel.',
    });
    // The question and the buttons under it whole in Replay's short pane, none a strip at its
    // edge (Roll back and Reopen were cut by the terminal's header), without a scroll by hand.
    const layout = new LayoutObject(app.page);
    const pane = app.replay.root.locator('.panel-body');
    expect(await layout.bandFit(pane, ask)).toBe('whole');
    expect(await layout.slivers(pane)).toEqual([]);
    await app.screenshot('consent-ask-1024x700');
    await app.replay.answerConsent(false);
    await app.replay.waitForNotice('not allowed', 10_000);
    await expect(ask.count()).resolves.toBe(0);
    expect(await app.library.branches()).toEqual([episode]);

    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.replay.pressReopen();
    await ask.waitFor({ timeout: 30_000 });
    expect(await layout.bandFit(pane, ask)).toBe('whole');
    expect(await layout.slivers(pane)).toEqual([]);
    await app.screenshot('consent-ask-1920x1080');
    await app.replay.answerConsent(true);
    await app.replay.waitForNotice('reopened at step 1');
    await app.terminal.waitForOpen();
    await app.terminal.run('echo REOPEN-$((40+2))', /REOPEN-42/);
    await app.screenshot('consent-allowed-reopened');
    expect(app.errors).toEqual([]);
  });
});
