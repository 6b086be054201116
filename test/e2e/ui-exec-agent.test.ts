import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, final, script } from '../support/harness';
import { PROJECT_ROOT } from '../support/cli';
import { LayoutObject, servedApp } from '../support/e2e';

const AGENT = resolve(PROJECT_ROOT, 'resources/agents/python-stdlib/agent.py');

describe("web mode: an exec: agent's own output, live and per step", () => {
  const app = servedApp();
  let dir: string;
  let model: string;
  beforeAll(() => {
    dir = mkdtempSync(join(app.home(), 'scripts-')); // the store: a place form paths may name
    model = script(dir, 'model.jsonl', [
      call('write_file', { path: 'greet.py', content: 'import sys\nprint(f"Hello, {sys.argv[1]}!")\n' }),
      call('execute_shell', { command: 'python3 greet.py World' }),
      final('greet.py greets.'),
    ]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 1024, height: 700 },
  ]) {
    it(`shows what the agent program prints while the step runs, then kept per step (${viewport.width}×${viewport.height})`, async () => {
      const go = join(dir, `go-${viewport.width}`);
      const a = await app.open(viewport);
      // The program says hello on stderr, then waits for the test's go before its first model call.
      await a.library.agentField.fill(
        `exec:echo "agent starting, model $STEPBOX_MODEL" >&2; until [ -e ${go} ]; do sleep 0.05; done; python3 ${AGENT}`,
      );
      await a.library.modelField.fill(`scripted:${model}`);
      await a.library.startTask('hello-python');
      await a.settled();
      await a.inspector.waitForStep(0);
      await a.inspector.tab('agent');
      await a.page.keyboard.press('F10');
      // Live: step 1 has not ended (the program waits), yet its stderr is on screen.
      const live = a.inspector.root.locator('[data-testid="agent-output"][data-step="1"]');
      await live.getByTestId('agent-stderr').waitFor({ timeout: 30_000 });
      expect(await live.innerText()).toMatch(
        /Step 1 is running[\s\S]*agent starting, model stepbox-scripted/,
      );
      expect(await a.stepper.root.getAttribute('data-state')).toBe('running');
      // "Inject at this step" whole in its pane while the step runs (it was cut under the
      // Sandbox header at 1024×700, the "Running — pause…" line above the form).
      const layout = new LayoutObject(a.page);
      const injectBody = a.inject.root.locator('.panel-body');
      expect(await layout.bandFit(injectBody, a.inject.root.getByTestId('inject-send'))).toBe('whole');
      expect(await layout.slivers(injectBody)).toEqual([]);
      // The placeholder says when the agent reads a message, with no example, so the field's
      // two lines hold it whole (its three-line sentence showed two lines and a cut third).
      await expect(a.inject.root.getByTestId('inject-text').getAttribute('placeholder')).resolves.toMatch(
        /^What the agent reads at step \d+, (before it acts|after step \d+[^:]*)$/,
      );
      await a.screenshot(`exec-agent-output-live-${viewport.width}`);

      writeFileSync(go, '');
      await a.timeline.waitForStep(1);
      await a.settled();
      await a.page.keyboard.press('F10');
      await a.timeline.waitForStep(2);
      await a.settled();
      // Kept per step: step 1's stderr, and step 2's stdout (the tool call step 2 let return).
      await a.timeline.select(1);
      await a.inspector.waitForStep(1);
      const one = a.inspector.root.locator('[data-testid="agent-output"][data-step="1"]');
      expect(await one.getByTestId('agent-stderr').innerText()).toContain(
        'agent starting, model stepbox-scripted',
      );
      expect(await one.getByTestId('agent-output-span').innerText()).toBe(
        'What the agent program printed from its start to the end of step 1.',
      );
      await a.timeline.select(2);
      await a.inspector.waitForStep(2);
      const two = a.inspector.root.locator('[data-testid="agent-output"][data-step="2"]');
      await two.getByTestId('agent-stdout').waitFor({ timeout: 20_000 });
      expect((await two.getByTestId('agent-stdout').innerText()).trim()).toBe('write_file -> ok');
      // Step 1's "write_file -> ok" is printed after step 1 ended: the line above it says the
      // span it covers, not "printed while step 2 ran" as if the line were step 2's own.
      expect(await two.getByTestId('agent-output-span').innerText()).toBe(
        'What the agent program printed after step 1 ended, up to the end of step 2: a line it prints once step 1’s call returns shows here, not under step 1.',
      );
      await a.screenshot(`exec-agent-output-step-${viewport.width}`);
      // The tab is named for a person, not the wire: no event or field names.
      const agentTab = a.inspector.root.locator('[data-tab="agent"]');
      expect(await agentTab.getAttribute('title')).toBe('Agent output');
      expect(await agentTab.innerText()).toBe(viewport.width < 1280 ? 'Agent' : 'Agent output');
      // Six tabs on one line, each read whole (no tab wraps, none scrolled out of the strip).
      const tabs = a.inspector.root.getByRole('tab');
      expect(await tabs.count()).toBe(6);
      // "Call" cannot wrap: every tab as tall as it is on one line.
      const heights = await tabs.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().height));
      for (const h of heights)
        expect(h, `tab heights: ${heights.join(', ')}`).toBeLessThanOrEqual(heights[0] + 1);
      for (let i = 0; i < 6; i++) expect(await layout.readable(tabs.nth(i)), `tab ${i}`).toBe(true);
      if (viewport.width === 1280) {
        // The window's fork of the exec: episode runs its command again, fast-forwarded to step 1.
        const before = await a.library.branches();
        await a.timeline.select(1);
        await a.replay.fork();
        // The fork's answer shows under its button, whole, not below the open sections.
        const forked = a.replay.root.getByTestId('replay-notice');
        await expect(forked.innerText()).resolves.toMatch(/^forked at step 1 — see the Inspector/);
        expect(await layout.readable(forked)).toBe(true);
        await a.page.keyboard.press('F5');
        // Ended, the window shows the fork as a recorded branch.
        await a.stepper.waitForEnd(60_000);
        await a.timeline.waitForStep(3);
        expect((await a.library.branches()).length).toBe(before.length + 1);
        expect((await a.timeline.rowAt(2)).text).toContain('python3 greet.py World');
        expect((await a.timeline.rowAt(3)).text).toContain('greet.py greets.');
        expect(await a.stepper.root.innerText()).toContain('succeeded');
        await a.screenshot('exec-agent-fork-1280');
      }
      expect(a.errors).toEqual([]);
      await a.page.close();
    });
  }
});
