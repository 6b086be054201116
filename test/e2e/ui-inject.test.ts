import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { FakeOpenAi, wireCall, type FakeRequest } from '../support/fake-openai';
import {
  launchBrowser,
  LayoutObject,
  openApp,
  removeHome,
  startServe,
  tempHome,
  until,
  type Served,
} from '../support/e2e';

const MARK = 'UI-INJECT';

/** The text of the last injected message the model was sent, or null. */
function lastInjected(req: FakeRequest): string | null {
  const messages = (req.body.messages ?? []) as { role: string; content: unknown }[];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (
      (m.role === 'user' || m.role === 'system') &&
      typeof m.content === 'string' &&
      m.content.includes(MARK)
    )
      return m.content.slice(m.content.indexOf(MARK));
  }
  return null;
}

describe('web mode: injecting an observation into an openai agent', () => {
  let browser: Browser;
  let served: Served;
  let home: string;
  const model = new FakeOpenAi();

  beforeAll(async () => {
    // The model echoes the last injected text into its next tool call, so the timeline shows the agent saw it.
    let n = 0;
    model.onRequest = (req) => {
      n += 1;
      const text = lastInjected(req);
      const command = text ? `echo '${text.replace(/'/g, '')}'` : 'echo waiting';
      return {
        message: { content: null, tool_calls: [wireCall(`call_${n}`, 'execute_shell', { command })] },
      };
    };
    const baseUrl = await model.start();
    home = tempHome();
    served = await startServe({
      home,
      env: { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'sk-test-not-secret' },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await served?.close();
    await model.close();
    if (home) removeHome(home);
  });

  it('injects a user message at the paused step; the next tool call carries it and the timeline marks it', async () => {
    const app = await openApp(browser, served.url);
    await app.library.agentField.fill('openai:fake-model');
    await app.library.startTask('hello-python');
    await app.stepTo(1);
    expect((await app.timeline.rowAt(1)).text).toContain('echo waiting');

    await app.inject.inject(`${MARK} the user asked for Beijing weather: recommend an umbrella`, 'user');
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(2);
    await app.settled();
    const rows = await until(
      () => app.timeline.rows(),
      (r) => r.some((x) => x.step === 2 && x.status === 'ok'),
      30_000,
      'step 2 done',
    );
    const row2 = rows.find((r) => r.step === 2);
    expect(row2?.text).toContain(`echo '${MARK} the user asked for Beijing weather`);
    expect(rows.some((r) => r.text.includes('INJ'))).toBe(true);
    // The model really was sent the injected text, and the inspector shows that exact request.
    expect(lastInjected(model.requests[model.requests.length - 1])).toContain('umbrella');
    await app.timeline.select(2);
    await app.inspector.waitForStep(2);
    await app.inspector.tab('request');
    expect(await app.inspector.model('request.json', (v) => v.includes(MARK))).toContain(
      'recommend an umbrella',
    );
    await app.screenshot('inject-openai');

    // Override the pending tool result: the tool ran, the agent sees the override.
    await app.inspector.tab('call');
    await app.inject.override('SUNNY-OVERRIDE');
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(3);
    await app.settled();
    const sent = model.requests[model.requests.length - 1].body.messages as {
      role: string;
      content: unknown;
    }[];
    expect(
      sent
        .filter((m) => m.role === 'tool')
        .map((m) => String(m.content))
        .join('\n'),
    ).toContain('SUNNY-OVERRIDE');
    await until(
      () => app.timeline.rows(),
      (r) => r.some((x) => x.step === 2 && x.text.includes('OVR')),
      30_000,
      'override mark on step 2',
    );
    expect(app.errors).toEqual([]);
  });

  it('at 1024×700 the override is on screen at a click, beside the timeline, and gives the agent its result', async () => {
    const app = await openApp(browser, served.url, { width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    // The task's own scripted agent: one step, then the result it is about to see is overridden.
    await app.library.startTask('hello-python');
    await app.stepTo(1);
    // The inspector shows the result the override replaces, as the timeline row does ("ok"): it
    // once said "no result yet (the call is pending)" and `null`, the detail fetched as the step
    // began, before its result, and never fetched again.
    await app.inspector.waitForStep(1);
    await app.inspector.outcome.waitFor({ timeout: 20_000 });
    await expect(app.timeline.rowStatus(1).innerText()).resolves.toBe('ok');
    await expect(app.inspector.outcome.innerText()).resolves.toBe('ok');

    // Without scrolling anything, the panel names the override: its tab is on screen, read whole.
    const tab = app.inject.tab('override');
    expect(await layout.onScreen(tab), 'the override tab is on screen').toBe(true);
    expect(await layout.readable(tab)).toBe(true);
    await expect(tab.innerText()).resolves.toBe('Override result');
    await app.screenshot('inject-override-tab-1024x700');
    await tab.click();
    // The section says what the agent is about to see: the result an override replaces.
    await expect(app.inject.pendingResult.innerText()).resolves.toMatch(/^Agent sees next: list_dir → ok /);
    await app.screenshot('inject-override-pending-1024x700');
    // One click: the field and its button are in sight, not under the fold of a 1024×700 window.
    for (const id of ['override-text', 'override-send'])
      expect(await layout.onScreen(app.inject.root.getByTestId(id)), `${id} on screen`).toBe(true);
    // The timeline keeps its room beside it.
    expect((await layout.box('timeline'))!.height).toBeGreaterThan(300);
    // Its buttons say what they do of a step that already ran ("Load pending result" and
    // "pending tool result overridden" read as if the tool were still to run).
    await expect(app.inject.copyResult.innerText()).resolves.toBe("Copy step 1's result to edit");
    await app.inject.override('RESULT-GIVEN-BY-A-PERSON');
    expect(await layout.onScreen(app.inject.notice)).toBe(true);
    await expect(app.inject.notice.innerText()).resolves.toBe(
      "The agent reads yours as step 1's result next.",
    );
    // One line: the section's first line ("Agent sees next: …") is not scrolled out above it.
    expect(await layout.lines(app.inject.notice)).toBe(1);
    expect(await layout.onScreen(app.inject.pendingResult)).toBe(true);
    await until(
      () => app.timeline.rows(),
      (r) => r.some((x) => x.step === 1 && x.text.includes('OVR')),
      30_000,
      'override mark on step 1',
    );
    // The inspector says above every tab that a person gave the result, and what the tool
    // really returned; the agent's result keeps the tool's exit (list_dir has none): the line
    // "the agent saw exit 0" once stood over the field "exit —".
    await app.inspector.override.waitFor({ timeout: 20_000 });
    await expect(app.inspector.override.innerText()).resolves.toMatch(
      /A person gave the result the agent saw in place of list_dir's; the tool really returned: ok/,
    );
    await expect(app.inspector.realVsShown.innerText()).resolves.toContain(
      'the agent saw ok (overridden by a person)',
    );
    await expect(app.inspector.exitCode.innerText()).resolves.toBe('—');
    expect(await layout.readable(app.inspector.override)).toBe(true);
    // The override section now names what the agent sees next: the person's result.
    await expect(app.inject.pendingResult.innerText()).resolves.toContain('RESULT-GIVEN-BY-A-PERSON');
    await app.screenshot('inject-override-1024x700');

    await app.resize({ width: 1920, height: 1080 });
    for (const id of ['override-text', 'override-send'])
      expect(await layout.onScreen(app.inject.root.getByTestId(id)), `${id} on screen at 1920`).toBe(true);
    await app.screenshot('inject-override-1920x1080');
    expect(app.errors).toEqual([]);
  });

  it('at 1024×700 the answer to an injected message is read whole, not cut under the Sandbox header', async () => {
    const app = await openApp(browser, served.url, { width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepTo(1);
    // A new hire's note after step 1: its answer took two lines and showed one, the second under
    // the Sandbox panel's header. Now one line, scrolled to whole, with no control cut above it.
    await app.inject.inject('Note from the user: also print a trailing newline.');
    const said = app.inject.root.getByTestId('inject-notice');
    await expect(said.innerText()).resolves.toBe('injected as user: the agent reads it next');
    await app.screenshot('inject-message-answer-1024x700');
    expect(await layout.unreadable(said)).toBe('');
    expect(await layout.slivers(app.inject.root.locator('.panel-body'))).toEqual([]);
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('a manual agent takes the next decision a person queues in the panel', async () => {
    const app = await openApp(browser, served.url);
    await app.library.agentField.fill('manual');
    await app.library.startTask('hello-python');
    await app.settled();
    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await app.inject.root.getByTestId('decide-args').fill('{"command": "echo MANUAL-$((40+2))"}');
    await app.inject.root.getByTestId('decide-send').click();
    await app.inject.root
      .locator('.notice')
      .filter({ hasText: 'decision queued' })
      .waitFor({ timeout: 10_000 });
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled();
    expect((await app.timeline.rowAt(1)).text).toContain('echo MANUAL-$((40+2))');
    await app.inspector.waitForStep(1);
    await app.inspector.tab('output');
    await app.inspector.root
      .getByTestId('inspector-stdout')
      .filter({ hasText: 'MANUAL-42' })
      .waitFor({ timeout: 10_000 });
    expect(app.errors).toEqual([]);
  });
});
