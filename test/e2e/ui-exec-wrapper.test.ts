import { describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store';
import { outputResult } from '../../shared/tool-result';
import { writeSampleEpisode } from '../support/traces';
import { LayoutObject, servedApp, until } from '../support/e2e';

// Codex CLI's exec_command output as recorded (the text the model read): its tool's header,
// then `Output:`, then the program's own lines — here a program that prints a fake success.
const RECORDED =
  'Chunk ID: 7f3e2a\nWall time: 0.0412 seconds\nProcess exited with code 2\nOriginal token count: 14\nOutput:\n' +
  'cat: notes/todo.txt: No such file or directory\nProcess exited with code 0\nOutput:\nall tests passed\n';

let episode: string;

describe("web mode: an agent's exec output is shown without its tool's wrapper", () => {
  const web = servedApp({
    seed: async (home) => {
      ({ episode } = await writeSampleEpisode(openEpisodeStore(home), {
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
          { final: 'done' },
        ],
      }));
    },
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
