import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli } from '../support/cli';
import { call, final, script } from '../support/harness';
import { LayoutObject, servedApp, until } from '../support/e2e';

const AGENT = resolve(PROJECT_ROOT, 'resources/agents/python-stdlib/agent.py');
const HELLO = resolve(PROJECT_ROOT, 'resources/tasks/hello-python');

/** Issue 19.9: the small things a new user tripped on, each from a person's first click. */
describe('web mode: the small things (issue 19.9)', () => {
  const web = servedApp();
  let dir: string;
  let model: string;
  beforeAll(() => {
    dir = mkdtempSync(join(web.home(), 'scripts-')); // the store: a place form paths may name
    model = script(dir, 'model.jsonl', [
      call('write_file', { path: 'greet.py', content: 'import sys\nprint(f"Hello, {sys.argv[1]}!")\n' }),
      call('execute_shell', { command: 'python3 greet.py World' }),
      final('greet.py greets.'),
    ]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the library says "Episodes" once; search filters as one types and an empty result names what was searched', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    // (g) The panel is the Library; "Episodes" heads its episode list only.
    const headings = await app.library.root
      .locator('h2, h3')
      .evaluateAll((els) => els.map((e) => (e as HTMLElement).innerText.trim().toLowerCase()));
    expect(headings.filter((h) => h === 'episodes')).toHaveLength(1);
    // (c) No Enter: the lists follow the typing; meanwhile nothing claims there are no cases.
    await app.library.root.locator('[data-testid="library-case"]').first().waitFor();
    await app.library.root.getByTestId('library-search').pressSequentially('zzz-nothing', { delay: 30 });
    await app.library.root.getByText('No episode matches').waitFor({ timeout: 10_000 });
    const text = await app.library.text();
    expect(text).toMatch(/No episode matches\. You searched for “zzz-nothing”/);
    expect(text).toMatch(/No case matches “zzz-nothing”/);
    expect(text).not.toMatch(/No bundled cases/);
    await app.screenshot('small-search-empty-1024x700');
    await app.library.root.getByTestId('library-search').fill('');
    await app.library.root.getByTestId('library-search').pressSequentially('loop', { delay: 30 });
    await until(
      () =>
        app.library.root
          .locator('[data-testid="library-case"]')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-case'))),
      (ids) => ids.length > 0 && ids.every((id) => id !== null && /loop/.test(id + ' ')),
      10_000,
      'cases filtered as typed',
    );
    await app.screenshot('small-search-as-you-type-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('numbers say their range and are refused, never clamped; a long message wraps; messages use the form’s field names', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.batches.root.getByTestId('batch-task').waitFor();
    // A case by its title, as the Cases list names it, not its folder's slug
    // ("case: context-overflow-drops-goal").
    const cases = (await app.batches.taskChoices()).filter((t) => t.startsWith('case: '));
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) expect(c).not.toMatch(/^case: [a-z0-9]+(-[a-z0-9]+)+$/);
    // (d) "at once 100000" is refused with its range, not run as 16.
    await app.batches.root.getByTestId('batch-task').selectOption('sample:hello-python');
    await app.batches.root.getByTestId('batch-concurrency').fill('100000');
    const problem = app.batches.root.getByTestId('batch-problem');
    await expect(problem.innerText()).resolves.toMatch(
      /“at once” takes a whole number from 1 to 16, not 100000/,
    );
    await expect(app.batches.root.getByTestId('batch-concurrency').getAttribute('max')).resolves.toBe('16');
    const start = app.batches.root.getByTestId('batch-start');
    expect(await start.isDisabled()).toBe(true);
    await expect(start.getAttribute('data-why')).resolves.toMatch(/at once/);
    await app.batches.root.getByTestId('batch-concurrency').fill('4');
    await app.batches.root.getByTestId('batch-episodes').fill('-1');
    await expect(problem.innerText()).resolves.toMatch(
      /“episodes” takes a whole number from 1 to 1000, not -1/,
    );
    await start.scrollIntoViewIfNeeded();
    await app.screenshot('small-numbers-refused-1024x700');
    await app.batches.root.getByTestId('batch-concurrency').fill('2');
    await app.batches.root.getByTestId('batch-episodes').fill('1');
    expect(await start.isDisabled()).toBe(false);

    // (e)(f) A long agent command without its model source: the answer names the form's
    // fields (no "--model SOURCE", no "agent spec") and wraps inside the library.
    const long = `exec:python3 ${'/very/long/folder/of/the/agent'.repeat(6)}/agent.py`;
    await app.library.agentField.fill(long);
    await app.library.startTask('hello-python');
    const error = app.library.root.getByTestId('start-error');
    await error.waitFor({ timeout: 30_000 });
    const message = await error.innerText();
    expect(message).toMatch(/“Its model calls answered by”/);
    expect(message).not.toMatch(/--model|agent spec/);
    expect(await error.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    const body = app.library.root.locator('.panel-body');
    expect(await body.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    const task = app.library.root.locator('[data-testid="library-task"][data-task="hello-python"]');
    await task.scrollIntoViewIfNeeded();
    expect(await layout.onScreen(task)).toBe(true);
    await error.scrollIntoViewIfNeeded();
    await app.screenshot('small-long-message-wraps-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('the inject hint is about this step; candidate step −1 is refused; the next episode’s inspector falls back to Call', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    // An exec: agent's episode, on its "Agent output" tab.
    await app.library.agentField.fill(`exec:python3 ${AGENT}`);
    await app.library.modelField.fill(`scripted:${model}`);
    await app.library.startTask('hello-python');
    await app.settled();
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled();
    await app.inspector.waitForStep(1);
    await app.inspector.tab('agent');

    // (g) The message hint names the step the agent reads it at and what the last step did.
    await app.inject.tab('message').click();
    const hint1 = await app.inject.root.getByTestId('inject-text').getAttribute('placeholder');
    expect(hint1).toMatch(/step 2[\s\S]*write_file greet\.py/);
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(2);
    await app.settled();
    const hint2 = await app.inject.root.getByTestId('inject-text').getAttribute('placeholder');
    expect(hint2).toMatch(/step 3[\s\S]*execute_shell python3 greet\.py/);
    expect(hint2).not.toBe(hint1);
    await app.screenshot('small-inject-hint-step-3-1024x700');
    // Viewing step 1 of 2, the message still goes in after step 2: the hint says so, not
    // "step 3, after step 2" as if about the step shown.
    await app.timeline.select(1);
    await app.inspector.waitForStep(1);
    await until(
      () => app.inject.root.getByTestId('inject-text').getAttribute('placeholder'),
      (p) =>
        p ===
        'Goes in after step 2, the latest, not after the earlier step you are viewing: the agent reads it at step 3.',
      10_000,
      'the inject hint naming where the message lands',
    );
    await expect(app.inject.root.getByTestId('inject-send').innerText()).resolves.toBe(
      'Inject after the latest step',
    );
    await app.screenshot('small-inject-hint-viewing-step-1-1024x700');
    await app.timeline.select(2);
    await app.inspector.waitForStep(2);

    // (d) Candidates for step −1: said with the range, and not tried. The range is the steps
    // the 2-step episode has (it hinted "1–3": there is no step 3 to replace).
    await app.replay.root.getByTestId('candidates-open').click();
    await app.sideBySide.root.waitFor();
    await expect(app.sideBySide.candidatesStepHint.innerText()).resolves.toBe('1–2');
    await app.sideBySide.root.getByTestId('candidates-step').fill('-1');
    await expect(app.sideBySide.root.getByTestId('candidates-problem').innerText()).resolves.toMatch(
      /“step” takes a whole number from 1 to 2, not -1/,
    );
    expect(await app.sideBySide.root.getByTestId('candidates-try').isDisabled()).toBe(true);
    await app.screenshot('small-candidates-step-refused-1024x700');
    await app.sideBySide.close();

    // (a) The next episode (the task's own scripted agent) has no "Agent output": its call shows.
    const first = await app.stepper.episodeId.getAttribute('data-id');
    await app.library.agentField.fill('');
    await app.library.startTask('hello-python');
    // The first episode has steps: the window asks before it stops it (19.8).
    await app.stepper.stopQuestionStop.click();
    await until(
      () => app.stepper.episodeId.getAttribute('data-id'),
      (id) => id !== null && id !== first,
      30_000,
      'the second episode open',
    );
    await app.settled();
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1);
    await app.settled();
    await app.inspector.waitForStep(1);
    await expect(app.inspector.root.locator('[data-tab="call"]').getAttribute('aria-selected')).resolves.toBe(
      'true',
    );
    expect(await app.inspector.text()).not.toMatch(/has no program of its own/);
    // The call itself is on screen: its outcome and arguments.
    await until(
      () => app.inspector.text(),
      (t) => /outcome[\s\S]*arguments/.test(t),
      20_000,
      'the call view',
    );
    await app.screenshot('small-inspector-falls-back-to-call-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('an episode another process writes (stepbox run in a shell) joins the list without a search', async () => {
    const app = await web.open({ width: 1920, height: 1080 });
    await app.library.root.getByTestId('library-search').waitFor();
    const before = await app.library.root.locator('[data-testid="library-episode"]').count();
    const run = await runCli(['run', HELLO, '--agent', `scripted:${join(HELLO, 'agent.jsonl')}`, '--json'], {
      env: { STEPBOX_HOME: web.home() },
      timeoutMs: 150_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const { episode } = JSON.parse(run.stdout) as { episode: string };
    // No click, no search: the list follows the store.
    await app.library.root
      .locator(`[data-testid="library-episode"][data-episode="${episode}"]`)
      .waitFor({ timeout: 15_000 });
    expect(await app.library.root.locator('[data-testid="library-episode"]').count()).toBe(before + 1);
    await app.screenshot('small-list-follows-the-store-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });
});
