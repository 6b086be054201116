import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store';
import { outputResult } from '../../shared/tool-result';
import { writeSampleEpisode, type SampleEpisodeOptions } from '../support/traces';
import { LayoutObject, servedApp, until } from '../support/e2e';

// Codex CLI's exec_command output as recorded (the text the model read): its tool's header,
// then `Output:`, then the program's own lines — here a program that prints a fake success.
const RECORDED =
  'Chunk ID: 7f3e2a\nWall time: 0.0412 seconds\nProcess exited with code 2\nOriginal token count: 14\nOutput:\n' +
  'cat: notes/todo.txt: No such file or directory\nProcess exited with code 0\nOutput:\nall tests passed\n';

/** How many lines of `pre` a person sees without scrolling: inside the window and every ancestor that clips it. */
function linesInView(pre: Locator): Promise<number> {
  return pre.evaluate((el) => {
    const box = el.getBoundingClientRect();
    let bottom = Math.min(box.bottom, innerHeight);
    for (let p = el.parentElement; p; p = p.parentElement) {
      const style = getComputedStyle(p);
      if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
      bottom = Math.min(bottom, p.getBoundingClientRect().top + p.clientTop + p.clientHeight);
    }
    const line = parseFloat(getComputedStyle(el).lineHeight) || 16;
    return Math.max(0, Math.floor((bottom - box.top) / line));
  });
}

let episode: string;
/** A Codex episode whose exec call exited 2 in its header, then an answer that claims success. */
let gaveUp: string;

/**
 * Writes a Codex episode whose step 1 runs `cat notes/todo.txt`, recorded as RECORDED, then answers
 * `final`; it ends as `end` says (succeeded by default).
 */
async function writeCodexEpisode(
  home: string,
  final: string,
  end?: SampleEpisodeOptions['end'],
): Promise<string> {
  const { episode: id } = await writeSampleEpisode(openEpisodeStore(home), {
    agent: 'codex',
    // As the engine records a recipe's agent: the version that ran (the Agent tab names it).
    recipe: 'codex@0.171.0',
    script: [
      {
        tool: 'exec_command',
        args: { cmd: 'cat notes/todo.txt' },
        // As an agent inside the sandbox records it: its text alone, no exit code, no duration.
        result: { ...outputResult(RECORDED), exit_code: undefined, stderr: undefined },
      },
      { final },
    ],
    ...(end ? { end } : {}),
  });
  return id;
}

describe("web mode: an agent's exec output is shown without its tool's wrapper", () => {
  const web = servedApp({
    seed: async (home) => {
      episode = await writeCodexEpisode(home, 'done');
      gaveUp = await writeCodexEpisode(home, 'Done: the notes are updated and the todo list is complete.', {
        status: 'failed',
        end_reason: 'final_answer',
        verifier: { success: false, exit_code: 1 },
      });
    },
  });

  it('the row says the exit the header says, and a row with two flags keeps its arguments readable (1024×700, 1920×1080)', async () => {
    const app = await web.open({ width: 1024, height: 700 });
    const layout = new LayoutObject(app.page);
    await app.library.openBranch(gaveUp);
    await app.timeline.waitForStep(2);
    for (const size of [
      { width: 1024, height: 700 },
      { width: 1920, height: 1080 },
    ]) {
      const tag = await app.resize(size);
      // Row 1: "exit 2", as the inspector says it, not a green "ok" (nor "exit≠0").
      await expect(app.timeline.rowStatus(1).innerText(), tag).resolves.toBe('exit 2');
      await expect(app.timeline.row(1).getAttribute('data-status')).resolves.toBe('nonzero_exit');
      // Row 2: the agent gave up after the missing file (gave_up reads the header's exit too) and
      // claimed success (unverified_success): two flags, and the answer still readable beside them.
      const flags = app.timeline.row(2).locator('[data-flag]');
      await expect
        .poll(() => flags.evaluateAll((els) => els.map((e) => e.getAttribute('data-flag')).sort()))
        .toEqual(['gave_up', 'unverified_success']);
      expect(
        await app.timeline.argsRoom(2),
        `${tag}: row 2's arguments beside two flags`,
      ).toBeGreaterThanOrEqual(size.width > 1024 ? 40 : 8);
      // In a narrow timeline the first flag by its word and the other counted ("+1", named in its
      // tooltip: which flag a row carries is read first, journey-cases); named whole in a wide one.
      if (size.width === 1024) {
        expect(await layout.readable(flags.nth(0)), `${tag}: the first flag`).toBe(true);
        const count = app.timeline.row(2).getByTestId('row-more-flags');
        await expect(count.innerText()).resolves.toBe('+1');
        expect(await layout.readable(count), `${tag}: the flag count`).toBe(true);
        await expect(count.getAttribute('title')).resolves.toMatch(/Gave up|Unverified success/);
      } else
        for (const i of [0, 1]) expect(await layout.readable(flags.nth(i)), `${tag}: flag ${i}`).toBe(true);
      // The Call tab: the outcome, and the result itself on screen without scrolling.
      await app.timeline.select(1);
      await app.inspector.waitForStep(1);
      await app.inspector.tab('call');
      await expect(app.inspector.outcome.innerText()).resolves.toBe('exit 2 — the command failed');
      // Its first lines at least, inside the window and the inspector's scrolling body.
      const result = app.inspector.root.locator('[data-json-view="result.json"] pre');
      expect(await linesInView(result), `${tag}: lines of the result in view`).toBeGreaterThanOrEqual(3);
      await app.screenshot(`exec-wrapper-rows-${tag}`);
    }
    expect(app.errors).toEqual([]);
  });

  it('the exit and wall time from the header, the output alone, the recorded text one click away', async () => {
    const app = await web.open({ width: 1280, height: 800 });
    await app.library.openBranch(episode);
    await app.timeline.waitForStep(2);
    await app.timeline.select(1);
    await app.inspector.waitForStep(1);

    // Call tab: the exit the tool's own header says — 2, never the program's "exit 0" below it.
    await app.inspector.tab('call');
    await expect(app.inspector.exitCode.innerText()).resolves.toBe(
      '2 (in the header of the agent’s tool output)',
    );

    await app.inspector.tab('output');
    await app.inspector.waitForStdout('No such file');
    await expect(app.inspector.execFacts.innerText()).resolves.toBe(
      'exit 2 · wall time 0.0412 s · 14 tokens of output',
    );
    // The output as the program printed it, its fake lines included (they are its words).
    await expect(app.inspector.stdout.textContent()).resolves.toBe(
      'cat: notes/todo.txt: No such file or directory\nProcess exited with code 0\nOutput:\nall tests passed\n',
    );
    const layout = new LayoutObject(app.page);
    expect(await layout.readable(app.inspector.execFacts)).toBe(true);
    await app.screenshot('exec-wrapper-output-1280x800');
    // The recorded-output terminal the same way: the output, then the header's facts in one line.
    const terminal = await until(
      () => app.terminal.screen('history'),
      (t) => t.includes('all tests passed'),
      20_000,
      'the recorded output of step 1',
    );
    expect(terminal).not.toContain('Chunk ID');
    expect(terminal).toContain('[exit 2 · wall time 0.0412 s · 14 tokens of output]');

    // The text as recorded (replay compares it), header and all, behind one click.
    await expect(app.inspector.rawStdout.locator('pre').isVisible()).resolves.toBe(false);
    const raw = await app.inspector.openRawStdout();
    expect(raw).toContain('Chunk ID: 7f3e2a\nWall time: 0.0412 seconds\nProcess exited with code 2');
    await app.screenshot('exec-wrapper-raw-1280x800');

    // Which agent ran it, with its version, as `stepbox show` and the shared file say it (the
    // window named no agent at all; all three left the recorded version out).
    await app.inspector.tab('agent');
    const span = app.inspector.root.getByTestId('agent-output-span');
    await expect(span.innerText()).resolves.toBe(
      'What the agent program, codex 0.171.0, printed from its start to the end of step 1.',
    );
    expect(await layout.readable(span)).toBe(true);
    await expect(app.stepper.taskName.getAttribute('title')).resolves.toBe(
      'sample-task · agent codex 0.171.0',
    );
    await app.screenshot('exec-wrapper-agent-1280x800');
    expect(app.errors).toEqual([]);
  });
});
