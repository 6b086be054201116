import { describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, type AppPage } from '../support/e2e';

/**
 * Issue 19, item 6: status words that are true. A command that exits 1 is not a green
 * "ok true" in the inspector; a call killed at its timeout and answered by a fallback is
 * not a green "ok" in its row: the row says "timeout" (and "→ fallback"), the inspector
 * says what happened, each in its colour. Screenshots: `status-words-<what>-<size>.png`.
 */

async function stepTo(app: AppPage, step: number): Promise<void> {
  await app.settled({ ended: true, timeoutMs: 120_000 });
  await app.page.keyboard.press('F10');
  await app.timeline.waitForStep(step, 120_000);
  await app.settled({ ended: true, timeoutMs: 120_000 });
}

/** The colour class of an element (`good`, `warn`, `bad`, `s-…`). */
function classOf(app: AppPage, selector: string): Promise<string> {
  return app.page
    .locator(selector)
    .first()
    .evaluate((el) => el.className);
}

describe('web mode: status words say what happened', () => {
  const web = servedApp();

  it('exit 1 reads as a failed command, not "ok true"', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.startTask('hello-python');
    await app.stepper.episodeState.waitFor({ timeout: 90_000 });
    await stepTo(app, 1);
    await stepTo(app, 2);
    await stepTo(app, 3);
    // Step 3 runs `python3 greet.py World`, which raises IndexError: exit 1.
    await expect(app.timeline.row(3).getByTestId('row-status').innerText()).resolves.toBe('exit 1');
    await app.timeline.select(3);
    await app.inspector.waitForStep(3);
    const outcome = app.inspector.root.getByTestId('inspector-outcome');
    await expect(outcome.innerText()).resolves.toBe('exit 1 — the command failed');
    expect(await classOf(app, '[data-testid="inspector-outcome"]')).toBe('warn');
    // No "ok true" beside the exit code.
    const facts = await app.inspector.root.getByTestId('inspector-facts').innerText();
    expect(facts).not.toMatch(/^ok\s+true$/m);
    // Above the JSON's `"ok": true`, the same story in a person's words, not field names.
    await expect(app.inspector.rawNote.first().innerText()).resolves.toBe(
      'The tool ran; the command itself failed (exit 1).',
    );
    expect(await new LayoutObject(app.page).readable(outcome)).toBe(true);
    // At the last step, chosen by hand: Replay offers no "latest" (there is no newer step).
    await expect(app.replay.root.getByTestId('scrub-label').innerText()).resolves.toBe('step 3 / 3');
    expect(await app.replay.root.getByRole('button', { name: 'latest', exact: true }).count()).toBe(0);
    await app.screenshot('status-words-exit1-1024x700');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);

  it('a call killed at its timeout and answered by a fallback reads "timeout → fallback", in red, in the row and the inspector', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    await app.library.openCase('timeout-too-strict');
    await app.library.caseRun('broken', 'timeout-too-strict').waitFor({ timeout: 120_000 });
    await stepTo(app, 1);
    const row = app.timeline.row(1);
    await expect(row.getByTestId('row-status').innerText()).resolves.toBe('timeout');
    expect(
      await classOf(app, '[data-testid="timeline-row"][data-step="1"] [data-testid="row-status"]'),
    ).toContain('s-fallback');
    // The mark's words (a narrow row shows its short glyph; the words are its long form).
    await expect(row.getByTestId('row-real').locator('.mk-long').textContent()).resolves.toBe('→ fallback');
    // Every mark of the row has a name a screen reader says, the narrow row's glyphs too (↺ and ≠
    // showed only a glyph hidden from it, and a title, which is no name).
    const marks = row.locator('.tl-marks .mark');
    expect(await marks.count()).toBeGreaterThanOrEqual(2);
    const said = await Promise.all((await marks.all()).map((m) => m.ariaSnapshot()));
    expect(
      said.filter((s) => !/\w/.test(s.replace(/^- (img|text|generic)\b:?/gm, ''))),
      'marks with no name',
    ).toEqual([]);
    expect(said.join('\n')).toContain('ROLLBACK: workspace restored mid-step');
    expect(said.join('\n')).toContain('→ fallback: agent shown a fallback');
    // The legend above the rows says what its marks mean, the narrow row's glyphs too (↺ and ≠
    // had none, while INJ/HUM/OVR/EDIT did).
    // As the narrow rows show them at 1024 wide: ↺ and ≠.
    const legend = await app.timeline.markLegend.innerText();
    expect(legend).toContain('↺ workspace restored mid-step');
    expect(legend).toContain('≠ agent shown a fallback');
    await expect(row.getByTestId('row-status').getAttribute('title')).resolves.toMatch(
      /^killed at its timeout; the agent was shown a fallback/,
    );
    await app.timeline.select(1);
    await app.inspector.waitForStep(1);
    const outcome = app.inspector.root.getByTestId('inspector-outcome');
    await expect(outcome.innerText()).resolves.toBe('error: timeout → the agent was shown a fallback');
    expect(await classOf(app, '[data-testid="inspector-outcome"]')).toBe('bad');
    await app.screenshot('status-words-fallback-1024x700');
    await app.page.setViewportSize({ width: 1920, height: 1080 });
    // Wide, the rows and the legend say the long forms.
    await expect(app.timeline.markLegend.innerText()).resolves.toMatch(
      /ROLLBACK workspace restored mid-step[\s\S]*→ fallback agent shown a fallback/,
    );
    await app.screenshot('status-words-fallback-1920x1080');
    await app.page.keyboard.press('Shift+F5');
    await app.stepper.waitForState('ended', 60_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 300_000);
});
