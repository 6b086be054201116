import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp } from '../support/e2e';

/**
 * Walk 11, finding 2: Agent `oracle` on a task.json project without solution/solve.sh was taken,
 * a sandbox started, and the episode ended as an error at step 0 in the CLI's words (`--agent`).
 * The card says the oracle cannot run there, and Start is refused under Agent before anything
 * starts. Screenshots: `oracle-project-<what>-<size>.png`.
 */
const base = mkdtempSync(join(tmpdir(), 'stepbox-oracle-e2e-'));
const task = (name: string, solution: boolean): string => {
  const dir = join(base, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'task.json'),
    JSON.stringify({ name, goal: 'Make done.txt', verifier: { command: 'test -f done.txt' } }),
  );
  if (solution) {
    mkdirSync(join(dir, 'solution'));
    writeFileSync(join(dir, 'solution', 'solve.sh'), 'touch done.txt\n');
  }
  return join(dir, 'task.json');
};
const bare = task('no-solution', false);
const solved = task('solved', true);
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('web mode: the oracle on a project', () => {
  const web = servedApp();

  it('is said not to run where no solution is, and its Start is greyed with that reason before a click', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const library = app.library;
    await library.waitForTasks();
    for (const p of [solved, bare]) await library.openProject(p);
    await library.agentField.fill('oracle');
    await expect
      .poll(() => library.projectAgent(bare).innerText())
      .toBe('not with oracle: it has no solution/solve.sh to run');
    await expect(library.projectAgent(solved).innerText()).resolves.toBe('with oracle');
    await library.project(bare).scrollIntoViewIfNeeded();
    expect(await layout.readable(library.projectAgent(bare))).toBe(true);
    await app.screenshot('oracle-project-cards-1024x700');
    // Greyed before a click, the card's words beside it its reason, the start's own words on it
    // (the server refuses the same start in them: unit oracle-start).
    const start = library.projectStart(bare);
    await expect(start.getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(start.getAttribute('data-why')).resolves.toBe(
      "Agent: oracle runs a Harbor task's solution/solve.sh, and no-solution has none; add solution/solve.sh to the task's folder or pick another agent",
    );
    expect(((await start.getAttribute('aria-describedby')) ?? '').split(' ')).toContain(
      await library.projectAgent(bare).getAttribute('id'),
    );
    await expect(library.projectStart(solved).getAttribute('aria-disabled')).resolves.toBeNull();
    // Pressed (Playwright's click waits for an enabled button: forced, as a person's is), it
    // starts nothing; focused, it says its whole reason in its line beside it.
    await start.click({ force: true });
    await start.focus();
    await expect
      .poll(() => layout.whySaid.innerText())
      .toBe(
        "Agent: oracle runs a Harbor task's solution/solve.sh, and no-solution has none; add solution/solve.sh to the task's folder or pick another agent",
      );
    // Every greyed button on screen says why, in a line of its own (issue 33, item 2).
    expect(await layout.unexplainedDisabled()).toEqual([]);
    // Nothing started: no episode open.
    await expect(app.stepper.episodeState.count()).resolves.toBe(0);
    await app.screenshot('oracle-project-refused-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('oracle-project-refused-1920x1080');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 200_000);
  it('after one project starts with a script, another project’s card and Start do not take it unseen', async () => {
    // Walk 11, finding 3: "with scripted:…/fix-dc.jsonl" stood under every project after one
    // started, and a Start there ran it.
    const app = await web.open({ width: 1024, height: 700 });
    const library = app.library;
    await library.waitForTasks();
    for (const p of [solved, bare]) await library.openProject(p);
    await library.agentField.fill('manual');
    await expect.poll(() => library.projectAgent(bare).innerText()).toBe('with manual');
    await library.projectStart(solved).click();
    await app.stepper.waitForBranch(120_000);
    await expect(library.projectAgent(solved).innerText()).resolves.toBe('with manual');
    await expect
      .poll(() => library.projectAgent(bare).innerText())
      .toBe('no agent yet: Agent holds solved’s; type or choose one');
    // Greyed before a click (walk 12: it looked startable until pressed), its reason beside it.
    const start = library.projectStart(bare);
    await expect(start.getAttribute('aria-disabled')).resolves.toBe('true');
    await expect(start.getAttribute('data-why')).resolves.toBe(
      'Agent: it holds the agent solved started with; type or choose the one for no-solution (nothing carries from one project to another)',
    );
    expect(((await start.getAttribute('aria-describedby')) ?? '').split(' ')).toContain(
      await library.projectAgent(bare).getAttribute('id'),
    );
    await library.project(bare).scrollIntoViewIfNeeded();
    await app.screenshot('project-agent-held-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    await app.screenshot('project-agent-held-1920x1080');
    // Typed anew, it is for the next start, whichever project.
    await library.agentField.fill('manual ');
    await expect.poll(() => library.projectAgent(bare).innerText()).toBe('with manual');
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 200_000);
});
