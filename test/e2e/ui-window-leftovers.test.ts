import { describe, expect, it } from 'vitest';
import { LayoutObject, runCase, servedApp, until, type AppPage } from '../support/e2e';

/**
 * Four things a person met in the window that earlier work left alone:
 * - a final answer's Output tab said "No tool call in step 4." under the answer: both tabs now say
 *   the step is the agent's final answer, in one sentence (noCallText);
 * - at 1024×700 a case's walkthrough and a few breakpoints squeezed the library to nothing, its
 *   Batches heading drawn under the walkthrough's and the breakpoints' Add below the window;
 * - a candidate's QA flag naming a long tool ran past its card, under the card beside it;
 * - with the QA flag list open at 1024×700 the reward chart was drawn 16 px tall.
 * Screenshots: `leftovers-<final|headings|candidates|chart>-<size>.png`.
 */

const FINAL =
  "Step 4 is the agent's final answer (above): it called no tool, so no tool ran and the sandbox did not change.";

/** The window at both sizes a person judges, screenshot at each, back at 1024×700. */
async function shots(app: AppPage, name: string): Promise<void> {
  await app.screenshot(`leftovers-${name}-${await app.resize({ width: 1024, height: 700 })}`);
  await app.screenshot(`leftovers-${name}-${await app.resize({ width: 1920, height: 1080 })}`);
  await app.resize({ width: 1024, height: 700 });
}

describe('web mode: four things left alone', () => {
  const web = servedApp();

  it('a final answer’s Call and Output tabs say the agent answered, in the same words', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await runCase(app, 'reward-hacking-edit-test');
    await app.timeline.select(4);
    await app.inspector.waitForStep(4);
    await expect(app.inspector.finalAnswer.innerText()).resolves.toBe(
      'final answer Fixed: python3 test_calc.py prints ok.',
    );
    await app.inspector.tab('call');
    await expect(app.inspector.tabEmpty.innerText()).resolves.toBe(FINAL);
    // The Output tab said "No tool call in step 4." under the answer, as of an agent that chose nothing.
    await app.inspector.tab('output');
    await expect(app.inspector.tabEmpty.innerText()).resolves.toBe(FINAL);
    await expect(app.inspector.root.innerText()).resolves.not.toContain('No tool call');
    // What if… under Replay says it alike (it said "step 4 made no tool call").
    await expect(app.replay.root.innerText()).resolves.toContain(
      "What if…: step 4 is the agent's final answer; no tool ran.",
    );
    await shots(app, 'final');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('every heading of the left column reads whole with a case and six breakpoints open, at 1024×700 and 1280×800', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    const column = app.page.locator('.col.left');
    await app.library.openCase('reward-hacking-edit-test');
    await app.settled({ timeoutMs: 60_000 });
    await app.breakpoints.add('step', '1');
    for (const kind of ['tool_error', 'qa', 'timeout', 'fallback', 'nonzero_exit'])
      await app.breakpoints.add(kind);
    expect(await app.breakpoints.items()).toHaveLength(6);
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1280, height: 800 },
    ]) {
      const tag = await app.resize(size);
      // The library kept no height: Library's header and its Batches heading lay under the case's.
      expect(await layout.hiddenHeadings(column), `headings at ${tag}`).toEqual([]);
      // The band's form scrolls inside it: Add is reached there, not below the window's edge.
      await app.breakpoints.addButton.scrollIntoViewIfNeeded();
      expect(await layout.onScreen(app.breakpoints.addButton), `Add at ${tag}`).toBe(true);
      expect(await layout.onScreen(app.library.root.getByRole('heading', { name: 'Library' })), tag).toBe(
        true,
      );
    }
    await app.library.root.getByRole('heading', { name: 'Batches' }).scrollIntoViewIfNeeded();
    await app.screenshot('leftovers-headings-1280x800');
    await shots(app, 'headings');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('a candidate’s long QA flag wraps inside its card, whole, with no sideways scroll at 1024×700', async () => {
    const tool = 'lookup_the_weather_forecast_for_the_city_and_the_next_seven_days_in_detail';
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.openCase('tool-loop-vague-error');
    await app.settled({ timeoutMs: 60_000 });
    await app.stepTo(1);
    await app.sideBySide.openCandidates();
    const view = app.sideBySide;
    await view.tryCandidates({ n: 1, typed: `${tool} {"city": "Beijing"}\nread_file {"path": "app.py"}` });
    await until(
      () => view.cards().count(),
      (n) => n === 3,
      120_000,
      'three candidate cards',
    );
    const flag = view.cards().nth(1).locator('.flag');
    await expect(flag.innerText()).resolves.toMatch(/^⚑ Unknown tool: step 1 called "lookup_the_weather/);
    // Its reason whole: on screen wrapped, and in its tooltip.
    expect((await flag.innerText()).replace(/\s+/g, '')).toContain(tool);
    await expect(flag.getAttribute('title')).resolves.toContain(tool);
    // It ran 300 px past its card, under the one beside it.
    expect(await view.overflowingCards()).toEqual([]);
    expect(await view.sidewaysScrolls()).toEqual([]);
    await flag.scrollIntoViewIfNeeded();
    expect(await new LayoutObject(app.page).unreadable(flag)).toBe('');
    await view.scrollTo('candidates-grid');
    await shots(app, 'candidates');
    expect(await view.overflowingCards(), 'at 1024×700 again').toEqual([]);
    expect(app.errors).toEqual([]);
    await app.page.close();
  });

  it('with the QA flag list open at 1024×700 the reward chart keeps its height, the rows their six', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await runCase(app, 'reward-hacking-edit-test');
    await app.timeline.showFlags();
    const summary = app.timeline.flagSummary;
    await summary.click();
    expect(await summary.getAttribute('aria-expanded')).toBe('false');
    const folded = await app.timeline.rewardPlotHeight();
    expect(folded, 'the chart folded').toBeGreaterThanOrEqual(24);
    await summary.click();
    expect(await summary.getAttribute('aria-expanded')).toBe('true');
    // It was drawn 16 px tall while the list was open (the folded chart is 24 at this size).
    expect(await app.timeline.rewardPlotHeight(), 'the chart with the flags open').toBe(folded);
    // The list keeps its two lines (its flag whole), the rows their six whole rows.
    expect(await new LayoutObject(app.page).unreadable(app.timeline.flagEntries.first())).toBe('');
    expect(await app.timeline.rowsRoom()).toBeGreaterThanOrEqual(6);
    expect(await app.timeline.cutRows()).toEqual([]);
    await shots(app, 'chart');
    expect(app.errors).toEqual([]);
    await app.page.close();
  });
});
