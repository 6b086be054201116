import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LayoutObject, servedApp, type AppPage } from '../support/e2e';

/**
 * A developer who has never seen stepbox brings four worlds of their own through the window:
 * a plain project folder (a git repo with a failing test), a task.json whose image is built
 * from a Dockerfile with no python3, a devcontainer folder, and a Harbor task folder. Each from
 * Open… to the verdict, with a scripted agent: listed, started, stepped, the inspector and the
 * live terminal read, then continued to its end. Screenshots at 1024×700 and 1920×1080 of each
 * stage: `journey-own-<world>-<stage>-<size>.png`.
 */

/** One assistant line of a scripted agent: a shell command, or the final answer. */
const shell = (id: string, command: string) =>
  JSON.stringify({
    role: 'assistant',
    tool_calls: [
      { id, type: 'function', function: { name: 'execute_shell', arguments: JSON.stringify({ command }) } },
    ],
  });
const answer = (content: string) => JSON.stringify({ role: 'assistant', content });

/** Writes `files` (relative path → text) under `dir`. */
function write(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Both sizes of a stage, the window left at 1024×700. */
async function shoot(app: AppPage, name: string): Promise<void> {
  await app.screenshot(`journey-own-${name}-1024x700`);
  await app.resize({ width: 1920, height: 1080 });
  await app.screenshot(`journey-own-${name}-1920x1080`);
  await app.resize({ width: 1024, height: 700 });
}

/** One world as the journey brings it. */
interface World {
  readonly name: string;
  /** The folder Open… is given. */
  readonly path: () => string;
  /** The Goal and Check typed on its card (a folder or devcontainer), none for a task that says its own. */
  readonly goal?: string;
  readonly check?: string;
  /** The scripted agent's lines: at least two tool calls, then the answer. */
  readonly script: readonly string[];
  /** What step 1's output shows in the inspector. */
  readonly step1Output: RegExp;
  /** A command typed in the live terminal and what it prints. */
  readonly terminal: readonly [string, RegExp];
  /** The end line, whole: the verifier that decided named in every world, not only Harbor's. */
  readonly verdict: string;
  /** Whether its image is built from a Dockerfile of its own (the wait shows the build). */
  readonly builds: boolean;
  /** A first try with this file broken (a Dockerfile whose RUN fails): the refusal, then the fix. */
  readonly broken?: { readonly file: string; readonly text: string };
}

describe('web mode: four worlds of ones own, from Open… to the verdict', () => {
  const web = servedApp();
  let dir: string;
  // This run's own Dockerfiles (a build the engine has not cached: its wait is seen).
  const token = `${process.pid}-${Date.now()}`;
  const worlds: World[] = [
    {
      name: 'git-folder',
      path: () => join(dir, 'calc'),
      goal: 'Make python3 test_calc.py pass',
      check: 'python3 test_calc.py',
      script: [
        shell('c1', 'python3 test_calc.py'),
        shell('c2', "sed -i 's/a - b/a + b/' calc.py && git diff --stat"),
        shell('c3', 'python3 test_calc.py'),
        answer('Fixed add() in calc.py; the test passes.'),
      ],
      step1Output: /AssertionError/,
      terminal: ['git log --oneline | cat', /first commit/],
      verdict: 'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0).',
      builds: false,
    },
    {
      name: 'no-python',
      path: () => join(dir, 'nopy'),
      script: [
        shell('c1', 'python3 --version; echo "exit $?"'),
        shell('c2', 'wc -l < words.txt > count.txt; cat count.txt'),
        answer('count.txt holds the line count.'),
      ],
      step1Output: /exit 127/,
      terminal: ['command -v python3 || echo no-python-here', /no-python-here/],
      verdict: 'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0).',
      builds: true,
      // A developer's first Dockerfile checks what it just removed, and the check fails.
      broken: {
        file: 'nopy/Dockerfile',
        text: 'FROM stepbox-sandbox:2\nUSER root\nRUN rm -rf /usr/bin/python3* && python3 --version\n',
      },
    },
    {
      name: 'devcontainer',
      path: () => join(dir, 'dcproj'),
      goal: 'Write the GREETING variable into greeting.txt',
      check: 'grep -q hi-dc greeting.txt',
      script: [
        shell('c1', 'cat made.txt; echo "GREETING=$GREETING"; pwd'),
        shell('c2', 'echo "$GREETING" > greeting.txt'),
        answer('greeting.txt holds the greeting.'),
      ],
      step1Output: /GREETING=hi-dc/,
      terminal: ['echo "[$GREETING]"', /\[hi-dc\]/],
      verdict: 'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0).',
      builds: true,
    },
    {
      name: 'harbor',
      path: () => join(dir, 'harbor-shout'),
      script: [
        shell('c1', 'pwd; cat greeting.txt'),
        shell('c2', 'tr a-z A-Z < greeting.txt > shout.txt'),
        answer('shout.txt holds HELLO.'),
      ],
      step1Output: /\/app/,
      terminal: ['cat greeting.txt', /hello/],
      verdict:
        'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt.',
      builds: true,
    },
  ];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'stepbox-e2e-journey-own-'));
    // (1) A git repo with a failing test.
    const calc = join(dir, 'calc');
    write(calc, {
      'calc.py': 'def add(a, b):\n    return a - b\n',
      'test_calc.py': 'from calc import add\n\nassert add(2, 3) == 5, add(2, 3)\nprint("ok")\n',
      'README.md': '# calc\n',
    });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=dev', '-c', 'user.email=dev@example.com', ...args], {
        cwd: calc,
        stdio: 'ignore',
      });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'first commit');
    // (2) A task.json whose image is built from a Dockerfile without python3.
    write(join(dir, 'nopy'), {
      'task.json': JSON.stringify(
        {
          name: 'count-words',
          goal: 'Write the number of lines of words.txt into count.txt',
          sandbox: { build: 'Dockerfile' },
          workspace: { files: { 'words.txt': 'one\ntwo\nthree\n' } },
          verifier: { command: 'test "$(cat count.txt)" = 3' },
          max_steps: 6,
        },
        null,
        2,
      ),
      Dockerfile: `# ${token}\nFROM stepbox-sandbox:2\nUSER root\nRUN rm -rf /usr/bin/python3* /usr/lib/python3* /usr/local/lib/python3*\nUSER agent\n`,
    });
    // (3) A devcontainer folder.
    write(join(dir, 'dcproj'), {
      '.devcontainer/devcontainer.json': JSON.stringify({
        name: 'dc journey',
        build: { dockerfile: 'Dockerfile' },
        containerEnv: { GREETING: 'hi-dc' },
        postCreateCommand: 'echo made > made.txt',
      }),
      '.devcontainer/Dockerfile': `# ${token}\nFROM stepbox-sandbox:2\n`,
      'main.sh': 'echo hello\n',
    });
    // (4) A Harbor task folder: its image from environment/, its verifier writing the reward file.
    write(join(dir, 'harbor-shout'), {
      'task.toml':
        'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n\n[agent]\ntimeout_sec = 120.0\n\n[environment]\nbuild_timeout_sec = 300.0\ncpus = 1\nmemory = "1G"\nstorage = "512M"\n',
      'instruction.md':
        'In /app, write the contents of `greeting.txt` in upper case into `/app/shout.txt`.\n',
      'environment/Dockerfile': `# ${token}\nFROM stepbox-sandbox:2\nWORKDIR /app\nCOPY greeting.txt /app/greeting.txt\n`,
      'environment/greeting.txt': 'hello\n',
      'tests/test.sh':
        '#!/bin/bash\ncd /app\nif [ "$(cat shout.txt 2>/dev/null)" = "HELLO" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const world of worlds) {
    it(`${world.name}: Open…, start, step, inspector, terminal, verdict`, async () => {
      const app = await web.open({ width: 1024, height: 700 });
      const { library, inspector, terminal, stepper, page } = app;
      const layout = new LayoutObject(page);
      const path = world.path();
      const name = world.name;
      const scripts = join(web.home(), 'scripts');
      mkdirSync(scripts, { recursive: true });
      const script = join(scripts, `${name}.jsonl`);
      writeFileSync(script, world.script.join('\n') + '\n');
      await library.waitForTasks();

      // Open…: the path typed.
      await library.openButton.click();
      await library.openPath.fill(path);
      await shoot(app, `${name}-1-open`);
      await page.getByTestId('open-submit').click();
      await library.openDialog.waitFor({ state: 'detached' });
      await library.project(path).waitFor();
      // The focus is back on Open…, the next Tab in the new project's card (it was on the page).
      expect((await layout.focused()).testId).toBe('projects-open');
      // Listed, it says what Start still needs: no world of one's own names an agent (it said
      // "with the task's own agent", and Start was refused for the lack of one).
      await expect(library.projectAgent(path).innerText()).resolves.toBe(
        'no agent yet: type one in Agent, above',
      );
      // Its Start greyed for that reason, not found out by a click (every disabled control says why).
      await expect(library.projectStart(path).getAttribute('aria-disabled')).resolves.toBe('true');
      // Nor does the empty Agent field promise one ("the task's own").
      await expect(library.agentField.getAttribute('placeholder')).resolves.toBe('empty: a sample’s own');
      await shoot(app, `${name}-1b-opened`);

      // Its card: Goal and Check where it takes them, the agent.
      if (world.goal) await library.projectGoal(path).fill(world.goal);
      if (world.check) await library.projectCheck(path).fill(world.check);
      await library.agentField.fill(`scripted:${script}`);
      await expect(library.projectAgent(path).innerText()).resolves.toBe(`with scripted:${script}`);
      await expect(library.projectStart(path).getAttribute('aria-disabled')).resolves.toBeNull();
      await library.project(path).scrollIntoViewIfNeeded();
      expect(await layout.onScreen(library.projectStart(path))).toBe(true);
      await shoot(app, `${name}-2-card`);

      if (world.broken) {
        // A build that fails: said on the project, with what the build printed and what to do.
        const good = readFileSync(join(dir, world.broken.file), 'utf8');
        writeFileSync(join(dir, world.broken.file), world.broken.text);
        await library.projectStart(path).click();
        const error = library.projectError(path);
        await error.waitFor({ timeout: 120_000 });
        await library.project(path).scrollIntoViewIfNeeded();
        // Its lines as written: the build's last lines each on a line, the fix on its own (they ran
        // together into one paragraph), the failure said once (it was said again in the lines).
        const starts = await layout.lineStarts(error);
        expect(starts, starts.join(' | ')).toEqual(expect.arrayContaining(['its last lin', 'fix the Dock']));
        expect(
          starts.filter((line) => /^Step \d\/\d : R$/.test(line)),
          starts.join(' | '),
        ).toHaveLength(1);
        const said = await error.innerText();
        expect(said.split('returned a non-zero code').length - 1, said).toBe(1);
        // The notification area no longer says it is building (its last line was the failure).
        await expect.poll(() => app.notices.ofKind('image').count()).toBe(0);
        await shoot(app, `${name}-2b-build-failed`);
        writeFileSync(join(dir, world.broken.file), good);
      }

      // Start: the wait until step 0 (a build, for the worlds with a Dockerfile).
      await library.projectStart(path).click();
      if (world.builds) {
        // The wait says what it waits for: the image of its own Dockerfile.
        await app.notices.ofKind('image').waitFor({ timeout: 120_000 });
        expect(await app.notices.said('image')).toMatchObject({
          text: /^(Building the image|The image) of \S*Dockerfile\b/,
        });
      }
      await app.screenshot(`journey-own-${name}-3-starting-1024x700`);
      await stepper.waitForBranch(300_000);
      await app.settled({ timeoutMs: 300_000 });
      // Step 0 says where the task came from, whole beside a built image's long name (it read
      // "…ask.toml" at 1024 px); a bare folder's task was made in the window and names no file.
      await inspector.waitForStep(0, 60_000);
      await inspector.task.waitFor();
      if (world.goal === undefined)
        expect(await layout.readable(inspector.taskPath), await layout.unreadable(inspector.taskPath)).toBe(
          true,
        );
      await shoot(app, `${name}-4-step0`);

      // Step 1, read in the inspector's Output. The image's line has said what it had to: gone.
      await app.stepTo(1);
      await expect.poll(() => app.notices.ofKind('image').count()).toBe(0);
      await inspector.tab('output');
      await inspector.root.filter({ hasText: world.step1Output }).waitFor({ timeout: 60_000 });
      await shoot(app, `${name}-5-step1-output`);

      // The live terminal: a command of the person's own, in the same sandbox.
      await terminal.waitForOpen();
      await terminal.run(world.terminal[0], world.terminal[1]);
      await shoot(app, `${name}-6-terminal`);

      // Step 2, then Continue to the end: the verdict.
      await app.stepTo(2);
      await shoot(app, `${name}-7-step2`);
      await page.keyboard.press('F5');
      await stepper.waitForEnd(180_000);
      await expect.poll(() => stepper.endReason.innerText(), { timeout: 60_000 }).toBe(world.verdict);
      await expect.poll(() => stepper.episodeState.innerText()).toBe('succeeded');
      await shoot(app, `${name}-8-verdict`);
      expect(app.errors).toEqual([]);
      await page.close();
    }, 600_000);
  }
});
