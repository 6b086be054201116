import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadWorld, worldFacts } from '../../electron/engine/harness/load-world.js';
import { loadHarborTask } from '../../electron/engine/harness/harbor-task.js';
import { loadTask } from '../../electron/engine/harness/load-task.js';
import { readDevcontainer } from '../../electron/engine/harness/devcontainer.js';
import { ProjectsService } from '../../electron/services/projects-service.js';
import { openEngine } from '../../electron/engine/open-engine.js';
import type { EpisodeManager } from '../../electron/services/episode-manager.js';
import { LibraryService } from '../../electron/services/library-service.js';
import { storeTracePort } from '../../electron/services/trace-port.js';
import { EpisodeView } from '../../shared/contract/models.js';
import { writeSampleEpisode } from '../support/traces.js';
import { runCli } from '../support/cli.js';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'stepbox-facts-')));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(rel: string, content: string): string {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), content);
  return join(root, rel);
}

/** The walk's devcontainer: an image, a setup command, and a key a sandbox cannot honour. */
function devcontainerProject(): string {
  write(
    'proj-dc/.devcontainer/devcontainer.json',
    '// mine\n{"name": "dc-demo", "image": "stepbox-sandbox:2", "postCreateCommand": "echo hi",\n "forwardPorts": [3000], "customizations": {},}\n',
  );
  write('proj-dc/mathx.py', 'x = 1\n');
  return join(root, 'proj-dc');
}

const FORWARD = '"forwardPorts" is not honoured (the sandbox has no network); it is left out';

describe('what a world leaves out: one list, from its reader', () => {
  it('a devcontainer: its warnings, short, are the CLI notes’ lines and what the window card gets', () => {
    const dir = devcontainerProject();
    const read = readDevcontainer(dir, {});
    if (!read.ok) throw new Error(read.error.message);
    expect(read.value.warnings).toEqual([FORWARD]);
    // The CLI's stderr says the same line with its file.
    expect(read.value.notes).toContain(
      `warning: ${join(dir, '.devcontainer/devcontainer.json')}: ${FORWARD}`,
    );
    // The start reads the same list (recorded in the header), and the card reads it without a goal.
    const world = loadWorld(dir, { goal: 'fix it' });
    if (!world.ok) throw new Error(world.error.message);
    expect(world.value.warnings).toEqual([FORWARD]);
    expect(worldFacts(dir)).toEqual({ kind: 'devcontainer', warnings: [FORWARD], problem: null, goal: null });
  });

  it('a bare folder with a Dockerfile: not used, and the task field that builds it', () => {
    write('bare/Dockerfile', 'FROM busybox\n');
    write('bare/run.sh', 'echo hi\n');
    const dir = join(root, 'bare');
    const facts = worldFacts(dir);
    expect(facts.kind).toBe('folder');
    expect(facts.warnings).toHaveLength(1);
    expect(facts.warnings[0]).toMatch(/Dockerfile is not used: .* runs on stepbox-sandbox:2/);
    expect(facts.warnings[0]).toContain('"sandbox": {"build": "."}');
    const world = loadWorld(dir, { goal: 'x' });
    if (!world.ok) throw new Error(world.error.message);
    expect(world.value.warnings).toEqual(facts.warnings);
    expect(world.value.notes).toContain(`warning: ${dir}: ${facts.warnings[0]}`);
    // A folder without one says nothing.
    write('plain/a.txt', 'a');
    expect(worldFacts(join(root, 'plain')).warnings).toEqual([]);
  });

  it('task init in a bare folder with a Dockerfile writes the build the warning names, and says so', async () => {
    // The walk: it wrote a task without sandbox.build, so the Dockerfile stayed unused.
    write('bare/Dockerfile', 'FROM busybox\n');
    write('bare/run.sh', 'echo hi\n');
    const dir = join(root, 'bare');
    const env = { env: { STEPBOX_HOME: join(root, 'home'), DOCKER_HOST: 'tcp://127.0.0.1:9' } };
    const init = await runCli(['task', 'init', dir, '--goal', 'Build it'], env);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(
      `its image is built from ${join(dir, 'Dockerfile')} ("sandbox": {"build": "."})`,
    );
    // The bare folder's warning is what the file answers: not said as it is written.
    expect(init.stderr).not.toMatch(/Dockerfile is not used/);
    const written = JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8'));
    expect(written.sandbox).toMatchObject({ build: '.' });
    expect(written.sandbox).not.toHaveProperty('image');
    // Read back by the one reader: built from the folder, nothing left unused.
    expect(worldFacts(dir)).toEqual({ kind: 'task', warnings: [], problem: null, goal: 'Build it' });
    const world = loadWorld(dir);
    if (!world.ok) throw new Error(world.error.message);
    expect(world.value.task.sandbox.build).toBe('.');
    // Without a Dockerfile it names the stepbox image, as before.
    write('plain/a.txt', 'a');
    const plain = await runCli(['task', 'init', join(root, 'plain'), '--goal', 'g'], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain('built from');
    expect(JSON.parse(readFileSync(join(root, 'plain/task.json'), 'utf8')).sandbox).toMatchObject({
      image: 'stepbox-sandbox:2',
    });
  });

  it('the projects list carries each project’s warnings, and a devcontainer.json that does not read as its problem', async () => {
    const dc = devcontainerProject();
    const projects = new ProjectsService(undefined);
    await projects.open(dc);
    expect(projects.list().projects[0]).toMatchObject({ world: 'devcontainer', warnings: [FORWARD] });
    write('proj-dc/.devcontainer/devcontainer.json', '{"image": "x"\n "forwardPorts": [1]}');
    const listed = projects.list().projects[0];
    expect(listed.warnings).toBeUndefined();
    expect(listed.problem).toMatch(/devcontainer\.json is not JSON with comments at line 2, column 2/);
  });

  it('the projects list carries what a task asks (a task.json’s goal, a Harbor task’s instruction), never a bare folder’s', async () => {
    const task = write('t/task.json', JSON.stringify({ name: 't', goal: 'Make done.txt\nthen stop' }));
    write('bare/notes.txt', 'n');
    const projects = new ProjectsService(undefined);
    await projects.open(task);
    await projects.open(join(process.cwd(), 'test/fixtures/harbor/dataset/hello-file'));
    await projects.open(join(root, 'bare'));
    const goals = Object.fromEntries(projects.list().projects.map((p) => [p.name, p.goal]));
    expect(goals).toEqual({
      t: 'Make done.txt\nthen stop',
      'hello-file': 'Create a file `/workspace/hello.txt` whose only line is `Hello, Harbor!`.\n',
      bare: undefined,
    });
  });
});

describe('a file that does not parse: its line, column, why and fix, one shape', () => {
  it('task.toml: the line and column smol-toml carries, and how to close the header', () => {
    write('h/task.toml', '[environment\ncpus = "two"\n');
    write('h/instruction.md', 'do it\n');
    const r = loadHarborTask(join(root, 'h'));
    const message = !r.ok ? r.error.message : '';
    expect(message).toBe(
      `${join(root, 'h/task.toml')} is not valid TOML at line 1, column 13 (illegal character in key): close the table header with "]" on its line, as in [environment]; Harbor reads [task], [environment], [agent] and [verifier] tables of key = value lines`,
    );
  });

  it('task.toml: a key with a space says how to write a key', () => {
    write('k/task.toml', '[environment]\nmy cpus = 2\n');
    const r = loadHarborTask(join(root, 'k'));
    expect(!r.ok && r.error.message).toMatch(
      /at line 2, column 4 \(illegal character in key\): a key is letters, digits/,
    );
  });

  it('task.json and devcontainer.json: the parser’s reason, the line and the fix, never the file’s text', () => {
    const file = write('t/task.json', '{"name": "x",\n "goal": "secret-goal"\n "max_steps": 3}');
    const t = loadTask(file);
    expect(!t.ok && t.error.message).toBe(
      `${file} is not valid JSON at line 3, column 2 (expected ',' or '}' after property value): fix it there (keys and strings in double quotes, a comma between entries and none after the last, no comments)`,
    );
    // No position from the parser (it quotes the text instead): searched for, the text left out.
    const quoted = write('u/task.json', '{"name": "x",\n "goal": secret}');
    const u = loadTask(quoted);
    expect(!u.ok && u.error.message).toMatch(
      /is not valid JSON at line 2, column 10 \(unexpected character\): fix it there/,
    );
    expect(!u.ok && u.error.message).not.toContain('secret');
    write('d/.devcontainer.json', '{"image": "x",\n  image2: 1}');
    const d = readDevcontainer(join(root, 'd'), {});
    expect(!d.ok && d.error.message).toMatch(
      /devcontainer\.json is not JSON with comments at line 2, column 3 \(expected double-quoted property name\): fix it there/,
    );
  });
});

describe('the trace header’s world_warnings, read as recorded input', () => {
  it('step 0’s view says the first branch’s warnings; strings only, one line each, cut, at most 64', async () => {
    const home = join(root, 'home');
    const engine = openEngine({ home, sweep: false });
    const long = 'x'.repeat(1000);
    const recorded = await writeSampleEpisode(engine.store, {
      headerExtra: {
        world_warnings: [
          FORWARD,
          42,
          { evil: true },
          'two\nlines\u001b[31m',
          long,
          '',
          ...Array(100).fill('more'),
        ],
      },
    });
    const none = await writeSampleEpisode(engine.store, { headerExtra: { world_warnings: 'not a list' } });
    const noEpisodes = {
      branches: () => [],
      stateOf: () => null,
      find: () => null,
    } as unknown as EpisodeManager;
    const library = new LibraryService(storeTracePort(engine), noEpisodes);
    const view = await library.open(recorded.branch);
    const said = EpisodeView.parse(view).world_warnings ?? [];
    expect(said.slice(0, 2)).toEqual([FORWARD, 'two lines']);
    expect(said[2]).toHaveLength(300);
    expect(said).toHaveLength(64);
    expect((await library.open(none.branch)).world_warnings).toEqual([]);
    await engine.close();
  });
});
