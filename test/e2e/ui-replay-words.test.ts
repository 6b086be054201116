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
    await app.screenshot('replay-words-agent-pressed-1280x800');
    // Typing into it clears the error: a person answers it where it points.
    await app.replay.agentField.fill('openai:tiny-model@http://127.0.0.1:9/v1');
    await expect(app.replay.error.count()).resolves.toBe(0);
    // …and Fork goes on with it (the endpoint is asked only at the next step).
    await expect(app.replay.tryFork()).resolves.toBeNull();
    expect(app.errors).toEqual([]);
  });
});
