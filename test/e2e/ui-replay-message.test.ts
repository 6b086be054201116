import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * The Replay pane's answer to a button (issue 33 round three): at 1024×700 the pane is short
 * (the terminal keeps its 180 px) and its message under the buttons was cut off at the pane's
 * bottom edge. The message is read whole, inside the window and its pane, after a rollback, a
 * fork and a refusal, and every Replay button stays on screen beside it; the branch on screen
 * stays whole in the timeline's branch tree once the tree scrolls. Screenshots:
 * `replay-message-<what>-<size>.png`.
 */

async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ timeoutMs: 90_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step, 90_000);
  await app.settled({ timeoutMs: 90_000 });
}

/** The message and the buttons: the message whole, every button's centre its own. */
async function answerAndButtons(app: AppPage, layout: LayoutObject, testId: string): Promise<void> {
  const answer = app.replay.root.getByTestId(testId);
  await answer.waitFor({ timeout: 60_000 });
  await until(
    () => layout.readable(answer),
    (ok) => ok,
    10_000,
    `the Replay pane's ${testId} read whole`,
  );
  for (const id of ['rollback', 'fork', 'fork-settings-open', 'replay-verify'])
    expect(await layout.onScreen(app.replay.root.getByTestId(id)), id).toBe(true);
}

/**
 * The Replay controls only a strip of which shows at the pane's top or bottom edge: a row
 * scrolled up to make room for an answer below it, or the "What if…" line under the answer
 * (cut in half at the bottom edge after a rollback at 1024×700; whole or away now).
 */
function slivers(app: AppPage, layout: LayoutObject): Promise<string[]> {
  return layout.slivers(app.replay.body);
}

describe('web mode: the Replay pane’s message is read whole at 1024×700', () => {
  const web = servedApp();

  it('after a rollback, a fork and a refusal the message is inside the window and its pane, the buttons beside it', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await stepTo(app, 1);
    await stepTo(app, 2);

    await app.timeline.select(1);
    await app.replay.rollback();
    await app.settled({ timeoutMs: 90_000 });
    await answerAndButtons(app, layout, 'replay-notice');
    await app.screenshot('replay-message-rollback-1024x700');
    expect(await slivers(app, layout)).toEqual([]);

    await stepTo(app, 2);
    // Stepped on from the rollback, its answer ("… now on b-…") is past: it no longer stays
    // beside step 2 (reviewers found it there in rollback-continued-1024x700).
    expect(await app.replay.notice.count()).toBe(0);
    await app.screenshot('replay-message-stepped-on-1024x700');
    await app.timeline.select(1);
    await app.replay.fork();
    await app.settled({ timeoutMs: 90_000 });
    await answerAndButtons(app, layout, 'replay-notice');
    // Three branches at 1024×700 overflow the timeline's branch tree: the one on screen is kept
    // in its view, whole (it was the half-cut last line).
    const current = app.timeline.root.locator('[data-testid="branch-node"].current');
    await until(
      () => layout.readable(current),
      (ok) => ok,
      10_000,
      'the current branch read whole in the tree',
    );
    expect(await slivers(app, layout)).toEqual([]);
    await app.screenshot('replay-message-fork-1024x700');
    // Each answer can be dismissed: its room goes back to the buttons.
    await app.replay.root.getByTestId('replay-notice-dismiss').click();
    expect(await app.replay.root.getByTestId('replay-notice').count()).toBe(0);

    // A refusal: "Reopen live at step 1" with an Agent whose file does not exist answers, in the
    // pane, with what is wrong: a long name makes it three lines at 1024×700.
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    await app.settled({ ended: true, timeoutMs: 90_000 });
    await app.replay.openForkSettings();
    await app.replay.agentField.fill('scripted:answers-for-a-fork-that-nobody-ever-recorded-here.jsonl');
    await app.page.getByTestId('fork-settings-done').click();
    await app.timeline.select(1);
    await app.replay.pressReopen();
    const error = app.replay.error;
    await error.waitFor({ timeout: 60_000 });
    await until(
      () => layout.readable(error),
      (ok) => ok,
      10_000,
      "the Replay pane's error read whole",
    );
    expect(await layout.lines(error)).toBeGreaterThanOrEqual(3);
    // The file it looked for, from stepbox's bundled files: no host layout (it showed /work/…/resources/…);
    // the whole path on hover.
    const said = await error.innerText();
    // Said as a reopen that made nothing, beside the branch a person stopped above (the bare
    // refusal read as that branch's end, "interrupted: a person stopped it").
    expect(said).toMatch(/^Reopen at step 1 did not start: Agent: no file at /);
    expect(said).toContain(
      'Agent: no file at resources/tasks/hello-python/answers-for-a-fork-that-nobody-ever-recorded-here.jsonl',
    );
    expect(said).not.toContain(process.cwd());
    await expect(error.locator('[title]').first().getAttribute('title')).resolves.toContain(
      `${process.cwd()}/resources/tasks/hello-python/answers-for-a-fork`,
    );
    expect(await layout.readable(current)).toBe(true);
    // Scrolled to, the error leaves no strip of a button row at the pane's top edge (a sliver of
    // "Roll back sandbox to here" showed above it): each button is in view whole, or away.
    expect(await slivers(app, layout)).toEqual([]);
    await app.screenshot('replay-message-error-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);
});
