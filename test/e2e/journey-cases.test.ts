import { ruleLabel, ruleWord } from '../../shared/qa/rule-label';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LayoutObject, SCREENSHOTS, servedApp, type AppPage } from '../support/e2e';

/**
 * Journeys a new hire walks, one per classic case: start it from its card, run it, and
 * check what a person must SEE — the flagged step's row on screen with its flag text,
 * step 0 where the case points at it, the real and the shown result side by side, the
 * end reason in words. Each is looked at again at 1024×700; screenshots are
 * `journey-<case>-<size>.png`.
 */
interface CaseJourney {
  readonly id: string;
  readonly rule: string;
  /** The walkthrough points at step 0 (setup). */
  readonly step0?: string;
  /** The walkthrough promises the real result beside the fallback the agent saw. */
  readonly realVsShown?: boolean;
  /** The episode dies: its last step is incomplete and the top bar says why. */
  readonly fatal?: RegExp;
  /**
   * The agent calls this tool, which the task does not offer: its rows name it, marked, with
   * the arguments it gave (`args`, per step) and a status in words.
   */
  readonly notOffered?: {
    readonly tool: string;
    readonly steps: readonly number[];
    readonly args: readonly string[];
  };
  /** Why this journey does not pass yet (skipped, named, until fixed). */
  readonly open?: string;
  /** Words the flag's explanation says (its tooltip and the flag list): true of what its rule compared. */
  readonly flagSays?: string;
  /** Words the walkthrough says of the flag, as the window shows it. */
  readonly walkthroughSays?: string;
}

const CASES: readonly CaseJourney[] = [
  {
    id: 'fatal-error',
    rule: 'early_termination',
    fatal: /script_exhausted|ran out/,
  },
  {
    id: 'state-leak-no-reset',
    rule: 'state_leak',
    step0: 'notes.tmp',
  },
  {
    id: 'timeout-too-strict',
    rule: 'fallback_abuse',
    realVsShown: true,
  },
  { id: 'fallback-writes-none', rule: 'memory_corruption' },
  { id: 'reward-hacking-edit-test', rule: 'reward_hacking' },
  // Its command is spelled with differing spaces: the flag said "the same arguments" of them.
  // Its 4th call, quoted, is the same words: the flag counted 3 (steps 1, 2, 3), the walkthrough 4.
  {
    id: 'tool-loop-vague-error',
    rule: 'loop',
    flagSays:
      'execute_shell called 4× with the same arguments (spacing and quoting aside) and no change to the workspace or memory in between (steps 1, 2, 3, 4)',
    walkthroughSays: 'called 4× … (steps 1, 2, 3, 4)',
  },
  { id: 'destructive-clean-start', rule: 'destructive_action' },
  {
    id: 'hallucinated-tool-name',
    rule: 'unknown_tool',
    notOffered: { tool: 'run_tests', steps: [1, 2], args: ['{}', '.'] },
  },
  // Its second flag (network_assumption, counted "+1" in the row) was cut mid-sentence in the
  // flag list ("…but the network"), issue 19's walk; the row leads with the first.
  { id: 'network-assumed', rule: 'unverified_success' },
];

const WALK_TIMES = join(SCREENSHOTS, '..', 'journey-times.json');

/**
 * The case's episode is open and settled in the stepper (a person sees its name and
 * Continue available): before that, F5 has nothing to continue and "no episode" would pass
 * for the end.
 */
async function caseEpisodeReady(app: AppPage, id: string, ms = 120_000): Promise<void> {
  await app.stepperAtRest({ ended: true, task: id }).waitFor({ timeout: ms });
}

async function ended(app: AppPage, ms = 180_000): Promise<void> {
  await app.stepper.waitForEnd(ms);
}

/** What a person must see for the case at the current viewport size. */
async function seeCase(app: AppPage, c: CaseJourney, size: string): Promise<void> {
  const layout = new LayoutObject(app.page);
  // The flagged step's row, scrolled to as a person would, is on screen with its flag's name
  // read whole in the row itself (not only in the flag list above the timeline).
  const flag = app.timeline.root.locator(`[data-testid="timeline-row"] [data-flag="${c.rule}"]`).first();
  await flag.waitFor({ timeout: 60_000 }).catch(async (e: unknown) => {
    // Seen once in a full run under load (fatal-error's flag never in its row): keep what the
    // window showed, for the next one to read.
    await app.screenshot(`journey-${c.id}-${size}-flag-missing`);
    const bar = await app.stepper.root.getAttribute('data-state');
    throw new Error(`${c.id} ${size}: no ${c.rule} flag in a row (stepper ${bar}): ${String(e)}`);
  });
  await flag.scrollIntoViewIfNeeded();
  expect(await layout.onScreen(flag), `${c.id} ${size}: the ${c.rule} flag is on screen`).toBe(true);
  // The rule's label for people (at 1024 its one word, whole, beside the arguments: "⚑ Unverified
  // succ…" cut both); its label and id (what `stepbox check` names) in the tooltip.
  expect(await flag.innerText()).toBe(`⚑ ${size === '1024x700' ? ruleWord(c.rule) : ruleLabel(c.rule)}`);
  expect(await flag.getAttribute('title')).toContain(ruleLabel(c.rule));
  if (size === '1024x700') expect(await layout.readable(flag), `${c.id} ${size}: the flag's word`).toBe(true);
  expect(await flag.getAttribute('title')).toContain(`(QA rule ${c.rule})`);
  if (c.flagSays) expect(await flag.getAttribute('title')).toContain(c.flagSays);
  const flaggedStep = Number(
    await flag.evaluate((el) => el.closest('[data-step]')?.getAttribute('data-step') ?? '-1'),
  );
  expect(flaggedStep).toBeGreaterThanOrEqual(0);
  if (size === '1280x800') {
    expect(await layout.readable(flag), `${c.id} ${size}: the ${c.rule} flag reads whole`).toBe(true);
    // Every mark shown beside the flag reads whole too (an error's whole `code: message` was cut
    // to "script_e…" in its box).
    const marks = app.timeline.row(flaggedStep).locator('.tl-marks .mark:visible');
    for (let i = 0; i < (await marks.count()); i++)
      expect(
        await layout.readable(marks.nth(i)),
        `${c.id} ${size}: mark ${i} of step ${flaggedStep} reads whole`,
      ).toBe(true);
  } else
    // In the narrow row the arguments keep their first 8 characters (a flag once left them one,
    // "The …"); a longer flag name is cut there, whole in its tooltip and the flag list below.
    expect(
      await app.timeline.argsRoom(flaggedStep),
      `${c.id} ${size}: step ${flaggedStep}'s arguments`,
    ).toBeGreaterThanOrEqual(8);

  // Every QA flag above the timeline reads whole, its list unfolded (a short pane folds it to
  // one line): at 1280×800 at once (the list grows with a case's few flags; a 72 px box cut the
  // last one mid-sentence, "…but the network", with no scrollbar), in a 1024-wide window where
  // they wrap to more lines, each scrolled to.
  await app.timeline.showFlags();
  const flags = app.timeline.flagEntries;
  const list = app.timeline.flagListBody;
  if (size === '1280x800')
    expect(
      await list.evaluate((el) => el.scrollHeight <= el.clientHeight + 1),
      `${c.id} ${size}: the flag list shows every flag without scrolling`,
    ).toBe(true);
  // At 1024×700 the open list is two lines (the timeline keeps six rows, issue 33.11): a flag
  // scrolled to shows its first line (its step and rule) whole; a longer one is read by scrolling
  // through it (snapping no more than near a flag's top), and whole in the folded list's tooltip.
  for (let i = 0; i < (await flags.count()); i++) {
    const flag = flags.nth(i);
    if (size === '1280x800') {
      expect(await layout.readable(flag), `${c.id} ${size}: QA flag ${i} reads whole`).toBe(true);
      continue;
    }
    await flag.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const firstLine = await flag.evaluate((el) => {
      const list = el.closest('ul')!.getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return r.top >= list.top - 0.5 && r.top + 16 <= list.bottom + 0.5;
    });
    expect(firstLine, `${c.id} ${size}: QA flag ${i}'s first line in view`).toBe(true);
  }
  if (c.flagSays) expect((await flags.allInnerTexts()).join('\n')).toContain(c.flagSays);
  if (c.walkthroughSays) expect(await app.library.walkthrough.innerText()).toContain(c.walkthroughSays);

  // The toolbar names the task whole; the id gives way first (its title and copy keep it whole),
  // and the bar's last button stays on screen ("hallucinated-t…" at 1024 wide).
  const task = app.stepper.taskName;
  expect(await task.innerText()).toMatch(new RegExp(`^${c.id}`));
  expect(await layout.readable(task), `${c.id} ${size}: the task name reads whole`).toBe(true);
  expect(await layout.onScreen(app.stepper.keysButton), `${c.id} ${size}: Keys on screen`).toBe(true);
  const id = app.stepper.episodeId;
  expect(await id.getAttribute('title')).toBe(await id.getAttribute('data-id'));

  // A short episode's # column is no wider than its step numbers: the tools keep their room.
  // Scrolled to first: at 1024×700 the timeline gives the terminal its 180 px (issue 33.11) and
  // shows fewer rows, following the last step.
  const step1 = app.timeline.stepCell(1);
  await step1.scrollIntoViewIfNeeded();
  expect(await layout.readable(step1), `${c.id} ${size}: step 1's number`).toBe(true);
  expect((await step1.boundingBox())?.width ?? 99).toBeLessThan(24);

  if (c.notOffered) {
    for (const step of c.notOffered.steps) {
      // The tool the agent asked for, named in its row's TOOL column and marked as not offered.
      const tool = app.timeline.notOffered(step);
      await app.timeline.toolCell(step).scrollIntoViewIfNeeded();
      expect(await tool.innerText()).toBe(c.notOffered.tool);
      expect(await tool.getAttribute('title')).toMatch(/not a tool this task offers/);
      expect(await layout.readable(app.timeline.toolCell(step)), `${c.id} ${size}: step ${step}'s tool`).toBe(
        true,
      );
      // The call as the agent made it, and why it failed in words: the cell held the parser's
      // words (`tool call 1: "run_tests" is not an enabled tool …`), the status "parse".
      const i = c.notOffered.steps.indexOf(step);
      await expect(app.timeline.argsCell(step).innerText()).resolves.toBe(c.notOffered.args[i]);
      await expect(app.timeline.rowStatus(step).innerText()).resolves.toBe('refused');
      expect(await app.timeline.rowStatus(step).getAttribute('title')).toMatch(
        new RegExp(`^unknown tool: ${c.notOffered.tool} is not a tool this task offers`),
      );
      if (size === '1280x800')
        expect(
          await layout.readable(app.timeline.rowStatus(step)),
          `${c.id} ${size}: step ${step}'s status`,
        ).toBe(true);
    }
    // The parser's message is in the inspector, which says what it means.
    const first = c.notOffered.steps[0];
    await app.timeline.select(first);
    await app.inspector.waitForStep(first);
    // The call counted as a person counts it: it read `tool_calls[0]`, the API field's index.
    await expect(app.inspector.root.getByTestId('inspector-parse-error').innerText()).resolves.toMatch(
      new RegExp(
        `^Unknown tool, so the call was refused\\. Tool call 1: "${c.notOffered.tool}" is not an enabled tool`,
      ),
    );
    // The Call tab and What if… say the call was refused, not that the step made none.
    await app.inspector.tab('call');
    await expect(app.inspector.root.innerText()).resolves.toContain(
      `Step ${first}'s call was refused before it ran (why: above), so no tool ran and the sandbox did not change.`,
    );
    await expect(app.replay.whatIfLine.innerText()).resolves.toBe(
      `What if…: step ${first}'s call was refused before it ran; no tool ran.`,
    );
  }

  if (c.step0) {
    const row0 = app.timeline.row(0);
    await row0.scrollIntoViewIfNeeded();
    expect(await layout.onScreen(row0), `${c.id} ${size}: step 0 row`).toBe(true);
    await app.timeline.select(0);
    await app.inspector.waitForStep(0);
    await app.inspector.tab('files');
    const files = app.inspector.root.getByTestId('inspector-files');
    await files.filter({ hasText: c.step0 }).waitFor({ timeout: 20_000 });
  }
  if (c.realVsShown) {
    const real = app.timeline.root.getByTestId('row-real').first();
    await real.waitFor({ timeout: 20_000 });
    const step = Number(await real.evaluate((el) => el.closest('[data-step]')?.getAttribute('data-step')));
    // The row keeps its call (tool and argument): a rollback inside the step does not erase it.
    const tool = await app.timeline.row(step).locator('.tl-tool').innerText();
    expect(tool.trim()).not.toBe('');
    expect((await app.timeline.row(step).locator('.tl-args').innerText()).trim()).not.toBe('');
    await app.timeline.select(step);
    await app.inspector.waitForStep(step);
    await app.inspector.tab('call');
    const both = app.inspector.root.getByTestId('inspector-real-vs-shown');
    await both.waitFor({ timeout: 20_000 });
    await both.scrollIntoViewIfNeeded();
    expect(await layout.onScreen(both), `${c.id} ${size}: real and shown results`).toBe(true);
    const text = await both.innerText();
    expect(text).toMatch(/real result\s+error timeout/);
    expect(text).toMatch(/the agent saw/);
    // The editor beside it shows the result the agent saw, not a stale `null` from the running step.
    await app.inspector.model('result.json', (v) => v.includes('"stdout"'), 20_000);
  }
  if (c.fatal) {
    const reason = app.stepper.endReason;
    await reason.waitFor({ timeout: 20_000 });
    expect(await reason.innerText()).toMatch(c.fatal);
    // The flag sits on the last step the agent took; nothing after it ran.
    const last = app.timeline.row(flaggedStep);
    await last.scrollIntoViewIfNeeded();
    expect(await layout.onScreen(last), `${c.id} ${size}: the last step's row`).toBe(true);
    // The script is named from its folder, in the end reason and the QA flag alike: a screenshot
    // or a shared trace showed the host's layout (/work/main/resources/cases/…/agent.jsonl).
    const flagText = await app.timeline.flagEntries.filter({ hasText: 'Ended early' }).first().innerText();
    const said = await reason.innerText();
    expect(said).toContain(`the script ${c.id}/agent.jsonl ran out after 2 lines;`);
    // Advice that fits a case: what the script stands for and how an agent should end, never
    // to edit the bundled script (it said "add lines or end with a final answer").
    expect(said).not.toMatch(/add lines/);
    expect(said).toContain(
      'the agent it stands in for stopped with no final answer, as an agent that crashes does. Its last step shows what it did;',
    );
    expect(said).not.toMatch(/\/resources\/|\/(work|tmp|home)\//);
    // The flag says the reason in words once; the whole message is the end's (it was repeated
    // three times on one screen, each time behind the raw code "script_exhausted:").
    expect(flagText).toContain(
      'a fatal error ended the episode before a final answer: the agent script ran out',
    );
    // (The case's walkthrough names the code on purpose: it teaches where to read it in a trace.)
    const shown = (await app.timeline.root.innerText()) + (await app.inspector.root.innerText());
    expect(shown).not.toContain('script_exhausted');
    expect(shown.split('agent.jsonl ran out after').length - 1).toBe(1);
    if (size === '1280x800') {
      // The flagged step's reward bars in the inspector have the legend's colours (one was
      // green by sign, the other blue by component, for the same format_valid).
      await app.timeline.select(flaggedStep);
      await app.inspector.waitForStep(flaggedStep);
      const bars = await app.inspector.rewardColours();
      const legend = await app.timeline.legendColours();
      expect(Object.keys(bars).sort()).toEqual(['format_valid', 'repeated_action', 'tool_error']);
      for (const [name, colour] of Object.entries(bars)) expect(colour, name).toBe(legend[name]);
      // Step 0 names the task's file from its folder, not by the host's whole path.
      await app.timeline.select(0);
      await app.inspector.waitForStep(0);
      await expect(app.inspector.taskPath.innerText()).resolves.toBe(`${c.id}/task.json`);
      await app.screenshot(`journey-${c.id}-step0-1280x800`);
      await app.timeline.select(flaggedStep);
      await app.inspector.waitForStep(flaggedStep);
    }
  }
}

describe('journeys: every classic case as a person sees it', () => {
  const web = servedApp();
  const times: Record<string, number> = {};

  for (const c of CASES) {
    (c.open ? it.skip : it)(
      `${c.id}: from its card to ${c.rule} on screen, at 1280×800 and 1024×700`,
      async () => {
        const started = Date.now();
        const app = await web.open({ width: 1280, height: 800 });
        await app.library.openCase(c.id);
        const walkthrough = app.library.walkthrough;
        await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
        await caseEpisodeReady(app, c.id);
        // Where the person is reading, the walkthrough says what the bar says (paused at step 0) and how to run it.
        const broken = walkthrough.locator('[data-testid="case-run"][data-variant="broken"]');
        // Waited on: the run's line reads the library's list, which may answer after the stepper settles.
        await broken.filter({ hasText: /paused at step 0(?!\d)/ }).waitFor({ timeout: 30_000 });
        expect(await app.stepper.episodeState.innerText()).toBe('paused at step 0');
        // The timeline counts as the bar does (it read "no step yet" beside "paused at step 0").
        expect(await app.timeline.stepCount.innerText()).toBe('only step 0, the setup');
        const runIt = app.library.caseRunIt;
        expect(await new LayoutObject(app.page).onScreen(runIt), `${c.id}: ▶ Run it on screen`).toBe(true);
        // The replay panel speaks of this episode, not of opening one.
        expect(await app.replay.text()).toMatch(/the episode has (only step 0, its setup|no step)\./);
        await app.screenshot(`journey-${c.id}-start-1280x800`);
        await runIt.click();
        await ended(app);
        await app.library.caseRunIt.waitFor({ state: 'detached', timeout: 30_000 });
        await seeCase(app, c, '1280x800');
        await app.screenshot(`journey-${c.id}-1280x800`);

        await app.resize({ width: 1024, height: 700 });
        await seeCase(app, c, '1024x700');
        await app.screenshot(`journey-${c.id}-1024x700`);
        times[c.id] = Date.now() - started;
        mkdirSync(SCREENSHOTS, { recursive: true });
        writeFileSync(WALK_TIMES, JSON.stringify(times, null, 2));
        expect(app.errors).toEqual([]);
        await app.page.close();
      },
      420_000,
    );
  }

  it('reward-hacking-edit-test: the fixed version runs from the walkthrough; broken raises its flag, fixed none', async () => {
    const id = 'reward-hacking-edit-test';
    const app = await web.open({ width: 1280, height: 800 });
    await app.library.openCase(id);
    const walkthrough = app.library.walkthrough;
    await walkthrough.filter({ hasText: 'Where to look' }).waitFor({ timeout: 60_000 });
    await caseEpisodeReady(app, id);
    await app.page.keyboard.press('F5');
    await ended(app);
    const broken = walkthrough.locator('[data-testid="case-run"][data-variant="broken"]');
    await broken.getByTestId('case-run-flags').filter({ hasText: 'QA flag' }).waitFor({ timeout: 60_000 });

    // One click in the window: the fixed version opens in the stepper, beside the same
    // walkthrough, and runs at once (issue 19 item 8: no second click on "Run it").
    const run = walkthrough.getByTestId('case-run-variant');
    expect(await run.innerText()).toContain('Run the fixed version');
    await run.click();
    const fixed = walkthrough.locator('[data-testid="case-run"][data-variant="fixed"]');
    await walkthrough
      .locator('[data-testid="case-run"][data-variant="fixed"].current')
      .waitFor({ timeout: 120_000 });
    await caseEpisodeReady(app, id);
    await ended(app);
    await fixed.getByTestId('case-run-flags').filter({ hasText: 'no QA flags' }).waitFor({ timeout: 60_000 });
    expect(await fixed.innerText()).toMatch(/succeeded/);
    // The fixed run's timeline has no flagged row; the broken run's line still shows its flags.
    expect(await app.timeline.root.locator('[data-flag]').count()).toBe(0);
    expect(await broken.getByTestId('case-run-flags').innerText()).toMatch(/⚑ \d+ QA flags?/);
    const layout = new LayoutObject(app.page);
    expect(await layout.onScreen(fixed)).toBe(true);
    await app.screenshot('journey-case-fixed-1280x800');

    await app.resize({ width: 1024, height: 700 });
    expect(await layout.onScreen(fixed)).toBe(true);
    expect(await layout.onScreen(broken)).toBe(true);
    // The walkthrough's title keeps the header's width: two lines at most, read whole.
    const title = walkthrough.locator('.panel-head h2');
    const lines = await title.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
    });
    expect(lines).toBeLessThanOrEqual(2);
    expect(await layout.readable(title)).toBe(true);
    await expect(walkthrough.getByTestId('case-variant').innerText()).resolves.toBe('fixed version open');
    await app.screenshot('journey-case-fixed-1024x700');

    // The broken run is one click back: the timeline shows its flag again.
    await broken.click();
    await app.timeline.root.locator('[data-flag="reward_hacking"]').first().waitFor({ timeout: 60_000 });
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 420_000);
});
