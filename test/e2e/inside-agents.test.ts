import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAgentRecipe } from '../support/cli';
import { call, final, script } from '../support/harness';
import { LayoutObject, servedApp, type AppPage } from '../support/e2e';

/**
 * Issue 18, items 1 and 7: a person starts Codex CLI or Claude Code (installed by
 * `stepbox agents add`, answered by a scripted model) from the window's start form,
 * pauses before an answer reaches the agent, edits the command the agent will run, and
 * sees the step like any episode's. Screenshots: `inside-<recipe>-<what>-<size>.png`.
 */
/** The exit field of a call an agent inside the sandbox ran: stepbox got only its text. */
const EXIT_NOT_REPORTED = '— (not reported apart: the agent ran it; see its output)';

const RECIPES = [
  {
    recipe: 'codex',
    tool: 'exec_command',
    id: 'call_',
    args: (command: string) => ({ cmd: command }),
    // Codex's tool writes the exit in a header above the output ("Process exited with code 0"): said as the exit.
    exit: '0 (in the header of the agent’s tool output)',
  },
  {
    recipe: 'claude-code',
    tool: 'Bash',
    id: 'toolu_',
    args: (command: string) => ({ command, description: 'Write greet.py' }),
    exit: EXIT_NOT_REPORTED,
  },
] as const;

/** What the scripted model first asks for: a greet.py without the name (the person fixes it). */
const WRONG = `printf 'print("Hello")\\n' > greet.py`;
/** What the person makes the agent run instead. */
const FIXED = `printf 'import sys\\nprint(f"Hello, {sys.argv[1]}!")\\n' > greet.py && echo EDITED-BY-PERSON`;

const SIZES = [
  { width: 1024, height: 700 },
  { width: 1920, height: 1080 },
];

/** Screenshots `name` at each size, ending at the first. */
async function shots(app: AppPage, name: string): Promise<void> {
  for (const size of [...SIZES.slice(1), SIZES[0]]) {
    await app.page.setViewportSize(size);
    await app.screenshot(`${name}-${size.width}x${size.height}`);
  }
}

describe('web mode: Codex CLI and Claude Code inside the sandbox, stepped from the window', () => {
  const web = servedApp();
  let dir: string;
  beforeAll(async () => {
    // Inside the store: the one rule reads form paths from the task's folder, the store, the
    // bundled files or an opened folder (file-fields.ts), never a temp folder elsewhere.
    dir = mkdtempSync(join(web.home(), 'scripts-'));
    // The way the integration test installs them: `stepbox agents add` into the served home.
    for (const r of RECIPES) await addAgentRecipe(web.home(), r.recipe);
  }, 1_200_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const r of RECIPES) {
    it(`${r.recipe}: the held card says what the agent will run; the edited ${r.tool} runs; the step shows its action, result and files`, async () => {
      const model = script(dir, `${r.recipe}.jsonl`, [
        call(r.tool, r.args(WRONG), `${r.id}1`),
        call(r.tool, r.args('python3 greet.py World'), `${r.id}2`),
        final('greet.py greets.'),
      ]);
      const app = await web.open(SIZES[0]);
      const layout = new LayoutObject(app.page);
      await app.library.chooseAgent(r.recipe, { model: `scripted:${model}` });
      await app.library.startTask('hello-python');
      await app.stepper.waitForBranch(120_000);
      await app.settled({ timeoutMs: 120_000 });

      // Paused before the answer reaches the agent: the card says what it will run.
      await app.stepper.stopBeforeAnswer.check();
      await app.page.keyboard.press('F10');
      const card = await app.held.waitFor('before_answer', undefined, 120_000);
      await app.settled({ timeoutMs: 120_000 });
      await expect(card.heading.textContent()).resolves.toContain(
        "Paused before the agent gets step 1's answer",
      );
      await expect(card.call.innerText()).resolves.toMatch(
        new RegExp(`The answer asks to run:\\s+${r.tool}`),
      );
      await expect(card.args.innerText()).resolves.toContain(`"${Object.keys(r.args(''))[0]}": "printf`);
      expect(await layout.readable(card.heading)).toBe(true);
      expect(await layout.onScreen(card.editArgumentsButton)).toBe(true);
      await shots(app, `inside-${r.recipe}-held`);

      // Edit the command: checked against the agent's own tool schema, then run.
      await card.editArguments();
      await expect(card.editor.inputValue()).resolves.toContain('print(\\"Hello\\")');
      await card.save(JSON.stringify({ nope: 'x' }));
      await card.error.waitFor({ timeout: 20_000 });
      await expect(card.error.innerText()).resolves.toContain(`${r.tool} cannot take these arguments:`);
      await card.save(JSON.stringify(r.args(FIXED)));
      await card.edited.waitFor({ timeout: 20_000 });
      await expect(card.args.innerText()).resolves.toContain('EDITED-BY-PERSON');
      await shots(app, `inside-${r.recipe}-edited`);

      // Give it to the agent, and let the rest run.
      await app.stepper.stopBeforeAnswer.uncheck();
      await card.run();
      await app.timeline.waitForStep(1, 120_000);
      await app.settled({ timeoutMs: 120_000 });
      await app.page.keyboard.press('F5');
      await app.stepper.waitForEnd(180_000);
      await app.timeline.waitForStep(3);
      // How it ended, in words (the verifier ran greet.py in the sandbox).
      await expect(app.stepper.endReason.innerText()).resolves.toBe(
        'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0).',
      );

      // Step 1 like any episode's: the action that ran (as edited), its result, its files.
      await app.timeline.select(1);
      await app.inspector.waitForStep(1);
      // The agent ran the call itself: stepbox did not time it and says so, never "0.0 ms".
      // (textContent: a 1024-wide timeline hides its time column.)
      await expect(app.timeline.durationAt(1).textContent()).resolves.toBe('—');
      await app.inspector.tab('call');
      await expect(app.inspector.duration.innerText()).resolves.toBe('—');
      // Nor an exit status of its own: the output's words carry it (a bare "—" stood beside
      // "Process exited with code 0"), read from Codex's header, said as not reported for Claude Code.
      await expect(app.inspector.exitCode.innerText()).resolves.toBe(r.exit);
      const row = await app.timeline.rowAt(1);
      expect(row.text).toContain(r.tool);
      expect(row.text).toContain('EDITED-BY-PERSON');
      await app.inspector.tab('output');
      await app.inspector.waitForStdout('EDITED-BY-PERSON', 30_000);
      await shots(app, `inside-${r.recipe}-result`);
      await app.inspector.tab('files');
      await expect(app.inspector.filesText()).resolves.toContain('greet.py');
      // The file itself on screen (not "Loading editor…"): what the edited command wrote.
      await app.inspector.model('diff-after', (v) => v.includes('sys.argv[1]'), 60_000);
      await shots(app, `inside-${r.recipe}-files`);
      await app.timeline.select(2);
      await app.inspector.waitForStep(2);
      expect((await app.timeline.rowAt(2)).text).toContain('python3 greet.py World');
      await app.inspector.tab('output');
      await app.inspector.waitForStdout('Hello, World!', 30_000);
      expect(app.errors).toEqual([]);
      await app.page.close();
    }, 900_000);
  }

  it('sandbox: with an Agent folder: the form says which folder before the start, and the agent runs from /opt/agent', async () => {
    const model = script(dir, 'python-inside.jsonl', [
      call('shell', { command: 'ls /opt/agent > from-opt-agent.txt && echo FROM-THE-FOLDER' }, 'call_1'),
      final('done.'),
    ]);
    const app = await web.open(SIZES[0]);
    const layout = new LayoutObject(app.page);
    await app.library.chooseAgent('sandbox:python3 /opt/agent/agent.py', {
      model: `scripted:${model}`,
      // From the task's folder, like a script path: resources/tasks/hello-python/../../agents/python-inside.
      agentDir: '../../agents/python-inside',
    });
    // One store file and one bundled folder for every sample task: said once, above the cards,
    // not under each (the cards at 1024×700 repeated both lines for the one Agent field).
    const once = app.library.startReadsForAll;
    for (const id of ['hello-python', 'notes-memory']) {
      await expect(app.library.startAgentFolder(id).count()).resolves.toBe(0);
      await expect(app.library.startReads(id).count()).resolves.toBe(0);
    }
    // Named from the bundled files and the store, never by the host's path (the card showed
    // /work/…/resources/agents/python-inside and /tmp/stepbox-e2e-…/scripts-…/python-inside.jsonl);
    // a store folder's name is whoever made it (scripts-k3J9x): it says what the file is.
    await expect(once.innerText()).resolves.toBe(
      'each ▶ reads python-inside.jsonl in the store\nagent files from resources/agents/python-inside',
    );
    // The full path stays a hover away.
    await expect(once.getByTestId('start-reads-all-script').getAttribute('title')).resolves.toBe(model);
    for (const size of SIZES) {
      await app.page.setViewportSize(size);
      await once.scrollIntoViewIfNeeded();
      expect(await layout.readable(once), `${size.width}`).toBe(true);
      const body = await app.page.locator('body').innerText();
      expect(body.split('python-inside.jsonl in the store').length - 1, `${size.width}`).toBe(1);
    }
    await shots(app, 'inside-agent-folder-form');
    await app.library.startTask('hello-python');
    await app.stepper.waitForBranch(120_000);
    await app.settled({ timeoutMs: 120_000 });
    await app.page.keyboard.press('F10');
    await app.timeline.waitForStep(1, 120_000);
    await app.settled({ timeoutMs: 120_000 });
    expect((await app.timeline.rowAt(1)).text).toContain('ls /opt/agent');
    await app.inspector.waitForStep(1);
    // Its tool ran inside, unseen by stepbox: no duration to show, and it says so.
    await expect(app.timeline.durationAt(1).textContent()).resolves.toBe('—');
    await expect(app.inspector.duration.innerText()).resolves.toBe('—');
    await expect(app.inspector.exitCode.innerText()).resolves.toBe(EXIT_NOT_REPORTED);
    await shots(app, 'inside-agent-untimed');
    await app.inspector.tab('output');
    await app.inspector.waitForStdout('FROM-THE-FOLDER', 30_000);
    expect(app.errors).toEqual([]);
    await app.page.close();
  }, 600_000);
});
