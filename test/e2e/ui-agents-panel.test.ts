import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { final, script } from '../support/harness';
import { AgentsPanelObject, fakeNpm, writeRecipe } from '../support/agents-e2e';
import { launchBrowser, openApp, removeHome, startServe, tempHome, type Served } from '../support/e2e';

// The journey of issue 32: add an agent in the window and start a task with it. npm is a
// fake on the served process's PATH (nothing downloads); each install waits at a gate the
// test opens, so the progress is seen, and one is cancelled half-way.

describe('web mode: the Agents panel adds an agent, and the start form runs a task with it', () => {
  let root: string;
  let home: string;
  let served: Served;
  let browser: Browser;
  let npm: ReturnType<typeof fakeNpm>;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'stepbox-e2e-agents-'));
    home = tempHome();
    npm = fakeNpm(root);
    // The agent's own program (a recipe's command runs in the sandbox's /workspace): it does the task and exits 0.
    writeRecipe(
      home,
      'demo-agent',
      `printf 'import sys\\nprint(f"Hello, {sys.argv[1]}!")\\n' > greet.py && python3 greet.py World`,
      'a demo agent (writes greet.py)',
    );
    writeRecipe(home, 'slow-agent', 'true', 'an agent whose download never ends');
    served = await startServe({ home, env: npm.env });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    if (home) removeHome(home);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const leftovers = () => readdirSync(join(home, 'agents')).filter((n) => n.startsWith('.tmp-'));

  it('shows an install in progress, cancels one leaving nothing, installs one, offers it and starts a task with it', async () => {
    const model = script(home, 'demo-model.jsonl', [final('nothing to do')]);
    const a = await openApp(browser, served.url, { width: 1280, height: 800 });
    const panel = new AgentsPanelObject(a.page);
    await panel.openByKeyboard();
    // The shipped recipes and the user's own, each with its state.
    for (const name of ['codex', 'claude-code', 'gemini', 'demo-agent', 'slow-agent'])
      await panel.row(name).waitFor();
    expect(await panel.state('demo-agent').innerText()).toContain('not installed · pins 1.0.0');
    // The user's own recipes say so; the shipped ones do not.
    expect(await panel.row('demo-agent').getByTestId('agent-own').innerText()).toMatch(/^\s*your recipe$/);
    expect(await panel.row('codex').getByTestId('agent-own').count()).toBe(0);

    // A long install: a progress bar with npm's line, and Cancel; nothing half-made is left.
    await panel.add('slow-agent').click();
    // What npm is doing in words as its lines come, the bar moving with them (npm says no total);
    // its raw line under Details (it stood there as the panel's sentence).
    const line = panel.progress('slow-agent').getByTestId('agent-install-line');
    await line.getByText('downloaded @demo/slow-agent from the npm registry').waitFor();
    await expect(line.locator('summary').innerText()).resolves.toBe('Details');
    await expect(line.locator('.agent-npm-raw').textContent()).resolves.toMatch(
      /^npm http fetch GET 200 .*slow-agent-1\.0\.0\.tgz/,
    );
    expect(await line.locator('.agent-npm-raw').isVisible()).toBe(false);
    expect(await panel.progress('slow-agent').innerText()).toMatch(/installing the package · \d+%/);
    expect(await panel.percent('slow-agent')).toBeGreaterThan(35);
    await a.screenshot('agents-panel-installing-1280');
    await a.resize({ width: 1024, height: 700 });
    await a.screenshot('agents-panel-installing-1024');
    await a.resize({ width: 1280, height: 800 });
    await panel.cancel('slow-agent').click();
    await panel
      .note('slow-agent')
      .getByText(/cancelled; nothing was left/)
      .waitFor();
    expect(await panel.state('slow-agent').innerText()).toContain('not installed');
    expect(leftovers()).toEqual([]);
    expect(existsSync(join(home, 'agents', 'slow-agent'))).toBe(false);

    // Add: progress, then installed, with its version, size and up-to-date state.
    await panel.add('demo-agent').click();
    await panel
      .progress('demo-agent')
      .getByText(/installing the package/)
      .waitFor();
    npm.release('@demo/demo-agent');
    await panel
      .note('demo-agent')
      .getByText(/installed demo-agent 1\.0\.0/)
      .waitFor();
    expect(await panel.progress('demo-agent').count()).toBe(0);
    expect(await panel.state('demo-agent').innerText()).toMatch(/^1\.0\.0 · \d+ B · up to date$/);
    expect(await panel.remove('demo-agent').isVisible()).toBe(true);
    expect(leftovers()).toEqual([]);
    await a.screenshot('agents-panel-installed-1280');
    await a.resize({ width: 1024, height: 700 });
    await a.screenshot('agents-panel-installed-1024');

    // Esc closes the panel and gives focus back to its opener.
    await a.page.keyboard.press('Escape');
    await panel.root.waitFor({ state: 'detached' });
    expect(await panel.opener.evaluate((el) => el === document.activeElement)).toBe(true);

    // The Agent field offers the installed agent (and only installed ones).
    const offered = await a.page
      .locator('#installed-agents option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(offered).toEqual(['demo-agent']);
    expect(await a.library.agentField.getAttribute('list')).toBe('installed-agents');

    // Started with it: the episode runs the recipe's command in the sandbox and ends.
    await a.library.chooseAgent('demo-agent', { model: `scripted:${model}` });
    await a.screenshot('agents-start-form-1024');
    await a.library.startTask('hello-python');
    await a.settled({ ended: true, timeoutMs: 120_000 });
    // Opened paused at its start, as every episode the library starts: Continue runs it to its end.
    if ((await a.stepper.root.getAttribute('data-state')) !== 'ended') await a.page.keyboard.press('F5');
    await a.stepperAtRest({ ended: true, task: 'hello-python' }).waitFor({ timeout: 120_000 });
    expect(await a.stepper.root.getAttribute('data-state')).toBe('ended');
    // It ran the recipe's command: the task's own check passes on what it wrote.
    await a.screenshot('agents-episode-ended-1024');
    // (The bar's badge: the inspector words it differently once the QA flags are read.)
    // The demo agent wrote its file without a model call: succeeded, and QA may flag so few actions.
    await a.stepper.root.getByText(/^succeeded( · ⚑ flagged)?$/).waitFor();
    // No step beside row 0, the setup: said as such ("0 steps" above a row numbered 0).
    await expect(a.timeline.stepCount.innerText()).resolves.toBe('only step 0, the setup');
    // The QA flag on an agent that made no tool call reads naturally ("after only 0 tool calls,
    // fewer than the 1 …").
    await a.timeline.showFlags();
    await expect(a.timeline.flagEntries.first().innerText()).resolves.toContain(
      'a reward of 1 without a single tool call, though the task asks for at least 1 tool call before a high reward',
    );
    await expect(a.timeline.root.innerText()).resolves.not.toMatch(/after only 0|\b0 steps\b/);
    // Ended at its setup, it still goes on from there, in the same words in Sandbox and Inject
    // (the Sandbox pointed at Replay, which has no step to offer).
    await expect(a.sandbox.reopenButton.innerText()).resolves.toBe('Reopen live at step 0');
    await expect(a.inject.forkButton.innerText()).resolves.toBe('Fork at step 0');
    expect(a.errors).toEqual([]);
    await a.page.close();
  });
});
