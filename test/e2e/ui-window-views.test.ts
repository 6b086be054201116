import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 33, the window's views: items 3 (a fork, a reopen and a rollback show the branch they
 * make at once), 7 (form contents stay with their episode), 11 (room at 1024×700 and 1280×800)
 * and 12 (a case's broken and fixed runs compared side by side from its drawer). Each from a
 * person's first click. Screenshots: `views-<what>-<size>.png`.
 */

const SMALL = { width: 1024, height: 700 } as const;
const MID = { width: 1280, height: 800 } as const;
const LARGE = { width: 1920, height: 1080 } as const;

async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ timeoutMs: 90_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step, 90_000);
  await app.settled({ timeoutMs: 90_000 });
}

async function openBranch(app: AppPage): Promise<string> {
  return (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
}

/** Screenshots at the small and the large size, back at the small one after. */
async function shots(app: AppPage, name: string): Promise<void> {
  await app.resize(SMALL);
  await app.screenshot(`views-${name}-1024x700`);
  await app.resize(LARGE);
  await app.screenshot(`views-${name}-1920x1080`);
  await app.resize(SMALL);
}

/**
 * The window shows the branch just made at step `k` from `parent`, without a step taken: its
 * id, "paused at step k", its rows up to k, the notice of where it came from, the branch tree
 * with it current under its parent, named as the tree names it (`name`: `fork 2@1`; three
 * nested forks all read "fork@1"), a live terminal. The notice names the parent so (`parentName`),
 * not by its id.
 */
async function showsNewBranch(
  app: AppPage,
  parent: string,
  k: number,
  name: string,
  parentName: string,
  says = `New live branch at step ${k}, from ${parentName}:`,
): Promise<string> {
  const branch = await until(
    () => openBranch(app),
    (id) => id !== '' && id !== parent,
    60_000,
    'the new branch on screen',
  );
  await until(
    () => app.stepper.episodeState.innerText(),
    (t) => t === `paused at step ${k}`,
    30_000,
    `"paused at step ${k}"`,
  );
  expect(await app.timeline.lastStep()).toBe(k);
  await until(
    () => app.stepper.stopReason.innerText({ timeout: 5_000 }).catch(() => '(no notice)'),
    (t) => t.includes(says),
    30_000,
    `the notice "${says}"`,
  );
  const tree = app.timeline.root.getByTestId('branch-tree');
  const node = tree.locator(`[data-testid="branch-node"][data-branch="${branch}"]`);
  await node.waitFor({ timeout: 30_000 });
  expect(await node.getAttribute('class')).toContain('current');
  await expect(app.timeline.branchName(branch).innerText()).resolves.toBe(name);
  // No id in the sentence: the parent by its name.
  expect(await app.stepper.stopReason.innerText()).not.toMatch(/\bb-\d{8}/);
  // Under its parent: the parent's item holds it.
  const underParent = tree.locator(
    `li:has(> [data-branch="${parent}"]) [data-testid="branch-node"][data-branch="${branch}"]`,
  );
  expect(await underParent.count()).toBe(1);
  await until(
    () => app.terminal.mode(),
    (m) => m === 'live',
    60_000,
    'a live terminal',
  );
  return branch;
}

describe('web mode: the window shows what a fork, a reopen and a rollback made, at once', () => {
  const web = servedApp();

  it('Fork, Reopen and a rollback switch to the new branch paused at its step, the tree showing where it came from', async () => {
    const app = await web.open(SMALL);
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await stepTo(app, 1);
    await stepTo(app, 2);
    const parent = await openBranch(app);

    // Fork at step 1 of the live branch: the fork is on screen before any step.
    await app.timeline.select(1);
    await app.replay.fork();
    const forked = await showsNewBranch(app, parent, 1, 'fork@1', 'main');
    // Room at 1024×700 with every Replay button there (a second branch adds "Compare with another
    // branch…"): the terminal keeps 180 px, the buttons are on screen.
    const layout = new LayoutObject(app.page);
    await app.terminal.waitForOpen();
    const terminal = await app.terminal.root.getByTestId('terminal-live').boundingBox();
    expect(terminal?.height ?? 0, 'terminal at 1024×700').toBeGreaterThanOrEqual(180);
    for (const id of ['rollback', 'fork', 'fork-settings-open', 'compare-open'])
      expect(await layout.onScreen(app.replay.root.getByTestId(id)), id).toBe(true);
    // And the timeline's rows keep their room beside the branch tree and the chart: four whole
    // rows (three and a strip before), the tree keeping four lines to show the parent's name.
    expect(
      await app.timeline.rowsRoom(),
      'whole timeline rows at 1024×700 with a fork',
    ).toBeGreaterThanOrEqual(4);
    expect(await app.timeline.cutRows(), 'rows cut at 1024×700 with a fork').toEqual([]);
    // Where it came from: the parent's node whole above the fork (its name, not its last line).
    const main = app.timeline.root.locator('[data-testid="branch-node"]').first();
    expect(await layout.notWhollyInView(main), 'the parent in the tree').toBe('');
    // The tree, shorter, still shows the branch on screen whole.
    const node = app.timeline.root.locator(`[data-testid="branch-node"][data-branch="${forked}"]`);
    expect(await layout.notWhollyInView(node), 'the fork in the tree').toBe('');
    await shots(app, 'forked');

    // Stopped, the fork is recorded; "Reopen live at step 1" shows the reopened branch at once
    // (it showed the recorded steps and "idle" until a Step).
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    // As a person waits for the ended fork to be drawn before picking its step (under CI's load the
    // click once landed while the ended branch was still being reloaded).
    await app.settled({ ended: true, timeoutMs: 90_000 });
    expect(await openBranch(app)).toBe(forked);
    await app.timeline.select(1);
    await app.replay.pressReopen();
    await app.replay.waitForNotice('reopened at step 1');
    const reopened = await showsNewBranch(app, forked, 1, 'fork 2@1', 'fork 1 at step 1');
    await expect(app.timeline.branchName(forked).innerText()).resolves.toBe('fork 1@1');
    expect(reopened).not.toBe(parent);
    await shots(app, 'reopened');

    // A step goes on in the reopened branch (no other branch is made)…
    await stepTo(app, 2);
    expect(await openBranch(app)).toBe(reopened);
    // …and a rollback to 1 switches to the branch it made, at once, under this one at step 1.
    await app.timeline.select(1);
    await app.replay.rollback();
    const rolled = await showsNewBranch(
      app,
      reopened,
      1,
      'fork 3@1',
      'fork 2 at step 1',
      'Rolled back to step 1: a new live branch from fork 2 at step 1, paused at step 1. Step 2 is undone here; fork 2 at step 1 keeps it.',
    );
    expect(
      await app.timeline.root
        .locator(`[data-testid="branch-node"][data-branch="${reopened}"]`)
        .getAttribute('data-status'),
    ).toBe('rolled-back');
    expect(rolled).not.toBe(reopened);
    await shots(app, 'rolled-back');

    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 600_000);

  it('the start form’s Agent and the fork settings stay with their episode: another episode shows them empty', async () => {
    const app = await web.open(SMALL);
    const agent = app.library.agentField;
    await agent.fill('manual');
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await app.settled({ timeoutMs: 90_000 });
    // The episode it started is on screen: the form still says what it was started with.
    expect(await agent.inputValue()).toBe('manual');
    // Fork settings typed for this episode.
    await app.page.keyboard.press('F10');
    await app.inject.root.getByTestId('decide-tool').fill('execute_shell');
    await app.inject.root.getByTestId('decide-args').fill('{"command": "echo one"}');
    await app.inject.root.getByTestId('decide-send').click();
    await app.timeline.waitForStep(1, 60_000);
    await app.settled({ timeoutMs: 90_000 });
    await app.replay.openForkSettings();
    await app.replay.agentField.fill('scripted:other.jsonl');
    // The closing button says what it does with what was typed (it read "Done").
    await expect(app.page.getByTestId('fork-settings-done').innerText()).resolves.toBe('Keep and close');
    await app.screenshot('views-fork-settings-typed-1024x700');
    await app.page.getByTestId('fork-settings-done').click();
    await app.screenshot('views-forms-typed-1024x700');

    // Another episode: a case from the library. Nothing typed for the first shows here.
    await app.library.openCase('network-assumed');
    // The first episode took a step: the window asks before stopping it.
    await app.stepper.stopQuestion.waitFor({ timeout: 30_000 });
    await app.stepper.stopQuestionStop.click();
    await app.library.walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 90_000 });
    await until(
      () => agent.inputValue(),
      (v) => v === '',
      10_000,
      'the start form’s Agent emptied',
    );
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1, 60_000);
    await app.settled({ timeoutMs: 90_000 });
    await app.replay.openForkSettings();
    expect(await app.replay.agentField.inputValue()).toBe('');
    await app.page.getByTestId('fork-settings-done').click();
    await shots(app, 'forms-other-episode');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 400_000);

  it('a case’s broken and fixed runs compared side by side from its drawer', async () => {
    const app = await web.open(MID);
    const { library } = app;
    const walkthrough = library.walkthrough;
    await library.openCase('reward-hacking-edit-test');
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 90_000 });
    // One run only: the button says what it needs, on focus.
    const compare = walkthrough.getByTestId('case-compare');
    expect(await compare.getAttribute('data-why')).toMatch(/Run the fixed version first/);
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(120_000);
    await walkthrough.getByTestId('case-run-variant').click();
    await walkthrough
      .locator('[data-testid="case-run"][data-variant="fixed"].current')
      .waitFor({ timeout: 120_000 });
    await app.stepper.waitForState('ended', 120_000);
    await library.compareCaseRuns();
    const view = app.page.locator('[data-testid="side-by-side"][data-view="compare"]');
    await view.waitFor({ timeout: 30_000 });
    const sides = app.page.getByTestId('compare-sides');
    await sides.waitFor({ timeout: 60_000 });
    const text = await sides.innerText();
    expect(text).toContain('broken run');
    expect(text).toContain('fixed run');
    // The broken run's success is reward hacking: it reads as flagged beside the fixed run's.
    const statuses = await app.page.getByTestId('compare-status').allInnerTexts();
    expect(statuses[0]).toBe('succeeded · ⚑ flagged');
    expect(statuses[1]).toBe('succeeded');
    // The broken run is the one on screen (its steps are "this" side), the fixed one beside it.
    await walkthrough.locator('[data-testid="case-run"][data-variant="broken"].current').waitFor();
    const verdict = app.page.getByTestId('compare-verdict');
    await expect(verdict.innerText()).resolves.toMatch(/First difference (at|after) step \d+ of broken run/);
    expect(await app.page.getByTestId('compare-table').locator('tbody tr').count()).toBeGreaterThan(1);
    const layout = new LayoutObject(app.page);
    expect(await layout.onScreen(verdict)).toBe(true);
    await app.screenshot('views-case-compare-1280x800');
    await shots(app, 'case-compare');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 500_000);

  it('room: the walkthrough keeps 160 px at 1280×800; at 1024×700 the terminal keeps 180 px and the fork settings are above the fold', async () => {
    const app = await web.open(MID);
    const layout = new LayoutObject(app.page);
    await app.library.openCase('tool-loop-vague-error');
    const walkthrough = app.library.walkthrough;
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await app.settled({ timeoutMs: 90_000 });
    const text = walkthrough.locator('.panel-body');
    // The header said "open · Enter or click to type" over a blank pane: the shell's prompt comes
    // a moment after the first bytes (the screenshot was early), so it is waited for.
    await app.terminal.waitForPrompt();
    await app.screenshot('views-room-1280x800');
    const mid = await text.boundingBox();
    expect(mid?.height ?? 0, 'walkthrough text at 1280×800').toBeGreaterThanOrEqual(160);

    await app.resize(SMALL);
    // The pointer left where the case's card was clicked rests, at 1024×700, on Compare broken
    // vs fixed: its reason then takes a line under it (why-lines' WhySlot), which is the
    // pointed-at state, not the room the drawer keeps. It is moved to the timeline's heading.
    const heading = (await layout.box('timeline'))!;
    await app.page.mouse.move(heading.x + 40, heading.y + 10);
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1, 60_000);
    await app.settled({ timeoutMs: 90_000 });
    await app.terminal.waitForOpen();
    await app.screenshot('views-room-1024x700');
    const terminal = await app.terminal.root.getByTestId('terminal-live').boundingBox();
    expect(terminal?.height ?? 0, 'terminal at 1024×700').toBeGreaterThanOrEqual(180);
    // The walkthrough's text keeps 160 px at 1024×700 too, under the drawer's own rows (two lines).
    const small = await text.boundingBox();
    expect(small?.height ?? 0, 'walkthrough text at 1024×700').toBeGreaterThanOrEqual(160);
    const open = app.replay.root.getByTestId('fork-settings-open');
    expect(await layout.onScreen(open)).toBe(true);
    await app.replay.openForkSettings();
    for (const id of ['replay-agent', 'replay-model', 'fork-settings-fork'])
      expect(await layout.onScreen(app.page.getByTestId(id)), id).toBe(true);
    // Titled in its buttons' words: a live branch forks, it is not reopened ("Fork and Reopen"
    // headed a dialog whose one action was Fork).
    const words = await app.replay.forkSettingsWords();
    expect(words.title).toMatch(/^Fork at step \d+$/);
    expect(words.buttons).toEqual([words.title, 'Keep and close']);
    await app.screenshot('views-room-fork-settings-1024x700');
    await app.page.getByTestId('fork-settings-done').click();
    await app.resize(LARGE);
    await app.screenshot('views-room-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('room: a live paused episode gets Inject its whole form; once it ends, Inject takes its sentence and the inspector the rest', async () => {
    const app = await web.open(SMALL);
    const layout = new LayoutObject(app.page);
    await app.library.startTask('hello-python');
    await app.stepTo(1);
    await app.settled({ timeoutMs: 90_000 });
    // Paused live: the message form, its role and its send button whole at both sizes (Inject has
    // its full pane back, the one it gave the inspector while the episode was opening).
    await app.inject.tab('message').click();
    const fields = [
      app.inject.root.getByTestId('inject-role'),
      app.inject.messageField,
      app.inject.root.getByTestId('inject-send'),
    ];
    for (const size of [SMALL, LARGE]) {
      const at = await app.resize(size);
      for (const field of fields) expect(await layout.notWhollyInView(field), at).toBe('');
      expect(await layout.onScreen(app.inject.root.getByTestId('inject-send')), at).toBe(true);
    }
    await shots(app, 'room-inject-live');
    const live = (await layout.box('tool-inspector'))!;
    // Usable: a message typed there is sent at this step.
    await app.inject.inject('the user asked for Beijing weather: recommend an umbrella');
    // Ended (the sample's script runs out of steps): the form is gone, a sentence and Fork stay,
    // whole, and the inspector takes the room the form had.
    await app.page.keyboard.press('F5');
    await app.stepper.waitForEnd(120_000);
    await app.settled({ ended: true, timeoutMs: 60_000 });
    await app.inject.ended.waitFor();
    for (const size of [SMALL, LARGE]) {
      const at = await app.resize(size);
      expect(await layout.contentHidden(app.inject.root.locator('.panel-body')), at).toBe('');
      expect(await layout.unreadable(app.inject.ended.locator('.state')), at).toBe('');
    }
    await shots(app, 'room-inject-ended');
    const ended = (await layout.box('tool-inspector'))!;
    expect(ended.height - live.height).toBeGreaterThanOrEqual(120);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
