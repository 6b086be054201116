import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp } from '../support/e2e';

/**
 * Walk 11 (shots 44, 51, 52, 54): what the CLI said of a project and the window did not. A
 * devcontainer's "forwardPorts is not honoured" is on its card and, once started, with step 0's
 * task facts (from the trace header); a bare folder's Dockerfile is said unused, with the task
 * field that builds it; a task.toml that does not parse names its line, column and fix. Each
 * line whole at 1024×700 and 1920×1080. Screenshots: `project-notes-<what>-<size>.png`.
 */
describe('web mode: a project says what stepbox leaves out of it, on its card and at step 0', () => {
  const web = servedApp();
  let dir: string;
  let dc: string;
  let bare: string;
  let harbor: string;
  let script: string;
  const FORWARD = '"forwardPorts" is not honoured (the sandbox has no network); it is left out';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-notes-'));
    // The walk's fixtures, as the new user wrote them.
    dc = join(dir, 'proj-dc');
    mkdirSync(join(dc, '.devcontainer'), { recursive: true });
    writeFileSync(
      join(dc, '.devcontainer', 'devcontainer.json'),
      '// my dev container\n{\n  "name": "dc-demo",\n  "image": "stepbox-sandbox:2",\n  "containerEnv": {"GREETING": "hi"},\n  "postCreateCommand": "echo created > created.txt",\n  "forwardPorts": [3000],\n  "customizations": {"vscode": {}},\n}\n',
    );
    writeFileSync(join(dc, 'mathx.py'), 'def mul(a,b):\n    return a+b\n');
    bare = join(dir, 'bare-docker');
    mkdirSync(bare);
    writeFileSync(join(bare, 'Dockerfile'), 'FROM stepbox-test-busybox:1\nWORKDIR /app\n');
    writeFileSync(join(bare, 'run.sh'), 'echo hi\n');
    harbor = join(dir, 'broken-harbor');
    mkdirSync(join(harbor, 'tests'), { recursive: true });
    writeFileSync(join(harbor, 'task.toml'), '[environment\ncpus = "two"\n');
    writeFileSync(join(harbor, 'instruction.md'), 'do it\n');
    writeFileSync(join(harbor, 'tests', 'test.sh'), 'exit 0\n');
    const scripts = join(web.home(), 'scripts');
    mkdirSync(scripts, { recursive: true });
    script = join(scripts, 'notes.jsonl');
    writeFileSync(script, JSON.stringify({ role: 'assistant', content: 'Done.' }) + '\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const size of [
    { width: 1024, height: 700 },
    { width: 1920, height: 1080 },
  ]) {
    const tag = `${size.width}x${size.height}`;
    it(`at ${tag}: the cards say the warnings, the unused Dockerfile and the TOML line; step 0 says the warnings`, async () => {
      const app = await web.open(size);
      const { library, inspector } = app;
      const layout = new LayoutObject(app.page);
      await library.waitForTasks();
      for (const path of [harbor, bare, dc]) {
        await library.openButton.scrollIntoViewIfNeeded();
        await library.openProject(path);
      }

      // The devcontainer: the CLI's warning, without its file's path, whole on the card.
      const dcWarnings = library.projectWarnings(dc);
      await expect.poll(() => dcWarnings.allInnerTexts()).toEqual([FORWARD]);
      await library.project(dc).scrollIntoViewIfNeeded();
      expect(await layout.unreadable(dcWarnings.first())).toBe('');
      await app.screenshot(`project-notes-devcontainer-card-${tag}`);

      // The bare folder: its Dockerfile is not used, and the task field that builds it.
      const bareWarnings = library.projectWarnings(bare);
      await expect.poll(() => bareWarnings.allInnerTexts()).toHaveLength(1);
      const said = await bareWarnings.first().innerText();
      expect(said).toMatch(
        /^its Dockerfile is not used: a folder without task\.json runs on stepbox-sandbox:2\./,
      );
      expect(said).toContain('"sandbox": {"build": "."}');
      await library.project(bare).scrollIntoViewIfNeeded();
      expect(await layout.unreadable(bareWarnings.first())).toBe('');
      await app.screenshot(`project-notes-bare-dockerfile-card-${tag}`);

      // The broken task.toml: its line and column, why, and the fix.
      const problem = library.projectProblem(harbor);
      await expect
        .poll(() => problem.innerText())
        .toMatch(
          /task\.toml is not valid TOML at line 1, column 13 \(illegal character in key\): close the table header with "\]" on its line, as in \[environment\]/,
        );
      await library.project(harbor).scrollIntoViewIfNeeded();
      expect(await layout.unreadable(problem)).toBe('');
      await app.screenshot(`project-notes-broken-toml-card-${tag}`);

      // Started: step 0's task facts say the same warning, recorded in the trace header.
      await library.agentField.fill(`scripted:${script}`);
      await library.projectGoal(dc).fill('Fix mul so python3 test_mathx.py prints ok');
      await library.projectStart(dc).click();
      await app.stepper.waitForBranch(120_000);
      await app.settled({ timeoutMs: 120_000 });
      await inspector.waitForStep(0, 60_000);
      await inspector.task.waitFor();
      await expect.poll(() => inspector.taskWarnings.allInnerTexts()).toEqual([FORWARD]);
      await inspector.taskWarnings.first().scrollIntoViewIfNeeded();
      expect(await layout.unreadable(inspector.taskWarnings.first())).toBe('');
      await app.screenshot(`project-notes-devcontainer-step0-${tag}`);
      expect(app.errors).toEqual([]);
      await app.page.close();
    }, 300_000);
  }
});
