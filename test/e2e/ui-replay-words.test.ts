import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store';
import { writeSampleEpisode } from '../support/traces';
import { launchBrowser, openApp, removeHome, startServe, tempHome, type Served } from '../support/e2e';

// Issue 19.9: the Replay panel's errors (fork / reopen / replay) come from the engine, which
// the CLI shares and which names its flags; the window says them with its fields' names.
let home: string;
let served: Served | undefined;
let browser: Browser | undefined;
let episode: string;

beforeAll(async () => {
  home = tempHome();
  // An openai: episode recorded without an endpoint: going on from it must name one.
  ({ episode } = await writeSampleEpisode(openEpisodeStore(home), { agent: 'openai:tiny-model', steps: 2 }));
  served = await startServe({ home });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  if (home) removeHome(home);
});

describe('web mode: the Replay panel words engine errors with its own fields', () => {
  it('a fork that needs an endpoint names the panel’s “Agent” field, not --agent / --base-url', async () => {
    const app = await openApp(browser!, served!.url, { width: 1280, height: 800 });
    await app.library.openBranch(episode);
    await app.timeline.waitForStep(2);
    await app.timeline.select(1);

    const error = await app.replay.tryFork();
    // “Agent” is empty (as recorded): the error says the model it names is the recorded agent's,
    // in one sentence and the fix.
    expect(await app.replay.agentField.inputValue()).toBe('');
    const said =
      'The recorded agent openai:tiny-model has no endpoint, and a default endpoint is never used. Fix: “Agent” openai:tiny-model@URL';
    // Said as a fork that made nothing (replay-store notStarted).
    expect(error).toBe(`Fork at step 1 did not start: ${said}`);
    expect(error).not.toMatch(/--agent|--base-url|agent spec/);
    // The field it names is there, open; the dialog asks, and does not greet the person with the
    // error in red before anything was typed or pressed in it (the panel behind says it).
    await expect(app.replay.agentField.isVisible()).resolves.toBe(true);
    await expect(app.replay.forkSettingsError.count()).resolves.toBe(0);
    await app.replay.root.scrollIntoViewIfNeeded();
    await app.screenshot('replay-words-agent-1280x800');
    // Its own Fork pressed with “Agent” still empty: now it says why, beside the field.
    await app.page.getByTestId('fork-settings-fork').click();
    await app.replay.forkSettingsError.waitFor({ timeout: 30_000 });
    await expect(app.replay.forkSettingsError.innerText()).resolves.toBe(
      `Fork at step 1 did not start: ${said}`,
    );
    // Said once: in the dialog that asked, not again in the Replay pane behind it.
    await expect(app.replay.error.count()).resolves.toBe(0);
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1920, height: 1080 },
      { width: 1280, height: 800 },
    ]) {
      const at = await app.resize(size);
      const body = await app.page.locator('body').innerText();
      expect(body.split('did not start').length - 1, at).toBe(1);
      await app.screenshot(`replay-words-agent-pressed-${at}`);
      // In the dialog, whole in the window (the dialog is drawn over the panes it sits in).
      const box = await app.replay.forkSettingsError.boundingBox();
      expect(box !== null && box.y >= 0 && box.y + box.height <= size.height, at).toBe(true);
    }
    // Typing into it clears the error: a person answers it where it points.
    await app.replay.agentField.fill('openai:tiny-model@http://127.0.0.1:9/v1');
    await expect(app.replay.error.count()).resolves.toBe(0);
    // …and Fork goes on with it (the endpoint is asked only at the next step).
    await expect(app.replay.tryFork()).resolves.toBeNull();
    expect(app.errors).toEqual([]);
  });
});
