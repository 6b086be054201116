import { describe, expect, it } from 'vitest';
import { LayoutObject, PANELS, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Issue 19, a new user's walk of the window: small things they tripped on, each from a
 * person's first click. Screenshots: `walk-<what>-<size>.png`.
 */

/** Starts hello-python (its bundled scripted agent) and takes `steps` steps with F10. */
async function startAndStep(app: AppPage, steps: number): Promise<void> {
  await app.library.startTask('hello-python');
  await app.stepper.waitForBranch(90_000);
  for (let s = 1; s <= steps; s++) {
    await app.settled({ timeoutMs: 90_000 });
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(s, 90_000);
  }
  await app.settled({ timeoutMs: 90_000 });
}

/** The Replay panel's visible buttons that are not whole on screen (a click at their centre misses them). */
async function cutButtons(app: AppPage): Promise<string[]> {
  const layout = new LayoutObject(app.page);
  const out: string[] = [];
  for (const button of await app.replay.visibleButtons().all())
    if (!(await layout.onScreen(button))) out.push((await button.innerText()).trim());
  return out;
}

/**
 * Every panel's visible buttons that a person cannot reach: not on screen, and not brought
 * on screen by its panel's own scroll (a long list, e.g. the library's cases), the window
 * itself never scrolling. Each as `panel: text`.
 */
async function unreachableButtons(app: AppPage): Promise<string[]> {
  const layout = new LayoutObject(app.page);
  const out: string[] = [];
  for (const panel of PANELS)
    for (const button of await app.panel(panel).locator('button:visible').all()) {
      if (await layout.onScreen(button)) continue;
      await button.evaluate((el) => el.scrollIntoView({ block: 'nearest' }));
      const windowScrolled = await app.page.evaluate(() => scrollX !== 0 || scrollY !== 0);
      if (windowScrolled || !(await layout.onScreen(button)))
        out.push(`${panel}: ${(await button.innerText()).trim().split('\n')[0]}`);
    }
  return out;
}

const SIZES = [
  { width: 1024, height: 700 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;

describe('web mode: what a new user tripped on (issue 19, the walk)', () => {
  const web = servedApp();

  it('a task card says the script it will read from the task’s folder at 1024×700, the full host path on hover', async () => {
    const app = await web.open(SIZES[0]);
    const layout = new LayoutObject(app.page);
    await app.library.waitForTasks();
    await app.library.chooseAgent('scripted:agent.jsonl');
    const reads = app.library.startReads('hello-python');
    await expect(reads.innerText()).resolves.toBe('reads hello-python/agent.jsonl');
    await expect(reads.getAttribute('title')).resolves.toMatch(
      /^\/.*\/resources\/tasks\/hello-python\/agent\.jsonl$/,
    );
    await app.library.taskCard('hello-python').scrollIntoViewIfNeeded();
    expect(await layout.readable(reads)).toBe(true);
    // Its folder's name and the file: at most two short lines in the narrow library (not a
    // host path over three), the path itself never broken (once cut as "hello- / python/…").
    expect(await layout.lines(reads)).toBeLessThanOrEqual(2);
    expect(await layout.lines(app.library.startReadsPath('hello-python'))).toBe(1);
    // A path outside the folders a start reads from: the start's refusal, the path whole, said
    // once under the field (every card would say it).
    await app.library.chooseAgent('scripted:/etc/hosts');
    await expect(app.library.startRefusalForAll.innerText()).resolves.toMatch(
      /^Agent: scripted:\/etc\/hosts is outside the folders stepbox reads files from \(the task's folder, /,
    );
    await expect(reads.count()).resolves.toBe(0);
    await app.library.chooseAgent('scripted:agent.jsonl');
    await app.screenshot('walk-task-card-reads-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('every button of the Replay panel is on screen at 1024×700, 1280×800 and 1920×1080 — "Try candidates…" and "Compare with another branch…" too, live and recorded — and every panel’s button in reach', async () => {
    const app = await web.open(SIZES[0]);
    await startAndStep(app, 2);
    // A fork makes a second branch: "Compare with another branch…" shows.
    await app.timeline.select(1);
    await app.replay.fork();
    await app.settled({ timeoutMs: 90_000 });
    await app.timeline.select(1);
    for (const size of SIZES) {
      await app.page.setViewportSize(size);
      await app.replay.root.getByTestId('compare-open').waitFor();
      expect(await cutButtons(app), `${size.width}×${size.height}`).toEqual([]);
      // And every other panel's buttons are on screen or in reach of the panel's own scroll.
      expect(await unreachableButtons(app), `${size.width}×${size.height}`).toEqual([]);
      // Named apart: these were the ones cut.
      const layout = new LayoutObject(app.page);
      expect(await layout.onScreen(app.replay.root.getByTestId('candidates-open'))).toBe(true);
      expect(await layout.onScreen(app.replay.root.getByTestId('compare-open'))).toBe(true);
      await app.screenshot(`walk-replay-actions-${size.width}x${size.height}`);
    }
    // Stopped, the branch is recorded: "Reopen live at step K" joins the row, and still all fit.
    await app.page.setViewportSize(SIZES[0]);
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForEnd(90_000);
    await app.replay.root.getByTestId('reopen').waitFor({ timeout: 30_000 });
    expect(await cutButtons(app), 'recorded, 1024×700').toEqual([]);
    await app.screenshot('walk-replay-actions-recorded-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('a tool call’s duration reads as a person reads it, the same in the timeline and the inspector, and the raw result has no clock noise', async () => {
    const app = await web.open({ width: 1600, height: 1000 });
    await startAndStep(app, 1);
    await app.timeline.select(1);
    await app.inspector.waitForStep(1);
    await app.inspector.tab('call');
    const said = await app.inspector.duration.innerText();
    // `3.2 ms`, `412 ms`, `1.24 s`, `12.3 s`, `2 min 05 s`: never `3.2145678`.
    expect(said).toMatch(/^(\d\.\d ms|\d+ ms|\d+\.\d\d? s|\d+ min \d\d s)$/);
    // One formatter: the timeline's time column says the same.
    await expect(app.timeline.rowDuration(1).innerText()).resolves.toBe(said);
    // The raw result keeps its key, rounded to what the facts show (0.1 ms).
    const result = await app.inspector.model('result.json', (t) => t.includes('duration_ms'));
    expect(result).toMatch(/"duration_ms": \d+(\.\d)?,?\n/);
    // The JSON keeps its structure; its text values read as their lines, not `"file\\n67 …"`.
    expect(JSON.parse(result)).toMatchObject({ ok: true, stdout: expect.stringContaining('\n') });
    const shown = await app.inspector.shownText('result.json');
    expect(shown).toContain('README.md');
    expect(shown).not.toContain('\\n');
    await app.screenshot('walk-inspector-duration-1600x1000');
    for (const size of [SIZES[0], { width: 1920, height: 1080 }]) {
      await app.resize(size);
      await app.screenshot(`walk-inspector-result-lines-${size.width}x${size.height}`);
    }
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 200_000);

  it('candidate branches are named by their number and action in the episode tree and compare’s list, and compare says when only the arguments differ', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    const layout = new LayoutObject(app.page);
    // Step 3 of hello-python runs `python3 greet.py World`; two typed candidates beside the agent's own.
    await startAndStep(app, 3);
    const main = (await app.stepper.episodeId.getAttribute('data-id')) ?? '';
    await app.sideBySide.openCandidates();
    await app.sideBySide.tryCandidates({
      n: 1,
      typed: 'execute_shell {"command": "ls -la"}\nread_file {"path": "greet.py"}',
    });
    await until(
      () => app.sideBySide.cards().count(),
      (n) => n === 3,
      120_000,
      'three candidate cards',
    );
    await app.sideBySide.pick(1);
    await app.settled({ timeoutMs: 90_000 });

    // The tree: every candidate named apart, by its number and what it tried (all are forks at step 2).
    // (The library's trees name every fork now: an earlier test's "fork@1" is left out.)
    const candidates = async () =>
      Object.fromEntries(
        Object.entries(await app.library.branchNames()).filter(([, n]) => n.startsWith('candidate ')),
      );
    const names = await until(
      candidates,
      (n) => Object.keys(n).length === 3,
      30_000,
      'three named candidate branches',
    );
    expect(Object.values(names).sort()).toEqual([
      'candidate 1 · execute_shell python3 greet.py World',
      'candidate 2 · execute_shell ls -la',
      'candidate 3 · read_file greet.py',
    ]);
    const picked = Object.entries(names).find(([, n]) => n.startsWith('candidate 2 '))![0];
    await app.library.waitForCurrent(picked);
    // The branch the candidate was picked at went on in it: marked so, not as a person's stop.
    await until(
      () => app.library.branchStatus(main),
      (s) => s === 'continued',
      30_000,
      'main marked as continued in the candidate',
    );
    await expect(app.library.branchNode(main).locator('.badge').innerText()).resolves.toBe(
      'went on in a candidate',
    );
    await app.library.branchNode(picked).scrollIntoViewIfNeeded();
    expect(await layout.readable(app.library.branchName(picked))).toBe(true);
    await app.screenshot('walk-candidate-names-tree-1280x800');

    // Compare's list names them the same way, beside the id.
    await app.sideBySide.openCompare();
    const choices = await app.sideBySide.compareChoiceTexts();
    for (const [branch, name] of Object.entries(names))
      if (branch !== picked) expect(choices[branch]).toBe(`${name} — ${branch}`);
    expect(choices[main]).toBe(`main — ${main}`);

    // The picked candidate against main: step 3 is the same tool, other arguments — said so.
    await app.sideBySide.compareWith(main);
    await expect(app.sideBySide.compareVerdict(3).innerText()).resolves.toBe(
      'different action: execute_shell arguments: command differs',
    );
    await app.sideBySide.scrollTo('compare');
    await app.screenshot('walk-compare-arguments-1280x800');
    await app.page.setViewportSize({ width: 1024, height: 700 });
    await app.screenshot('walk-compare-arguments-1024x700');
    await app.sideBySide.close();
    await app.screenshot('walk-candidate-names-tree-1024x700');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
