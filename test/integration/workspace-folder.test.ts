import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import { parseJsonOutput, runCli } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { call, final, ofType, script } from '../support/harness.js';

/**
 * A project folder as a workspace (issue 30, item 1): `stepbox run DIR --goal`, `task
 * init`, `workspace.from` with files and setup, against the real engine, with a scripted
 * agent; fork, replay and a bundle after the folder changed on disk (or is gone) still see
 * the files as recorded in snapshot 0.
 */

interface RunJson {
  episode: string;
  branch: string;
  status: string;
  trace: string;
}

let work: string;
let home: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'stepbox-folder-'));
  home = join(work, 'home');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const cli = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { env: { STEPBOX_HOME: home, ...env }, timeoutMs: 240_000 });

function write(root: string, rel: string, content: string): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), content);
}

/** The stdout of every tool result of a trace, in order. */
function outputs(tracePath: string): string[] {
  return ofType(readTraceFile(tracePath).events, 'tool_result').map((e) => e.result.stdout ?? '');
}

function warnings(tracePath: string) {
  return ofType(readTraceFile(tracePath).events, 'warning');
}

const git = (root: string, ...args: string[]) =>
  execFileSync('git', ['-C', root, '-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {
    stdio: 'ignore',
  });

describeDocker('a project folder is a workspace', () => {
  it('a git checkout: tracked + untracked files and .git (git status works inside), ignored files and an escaping symlink left out; fork, replay and a bundle keep the recorded files after the folder changes', async () => {
    const proj = join(work, 'repo');
    write(proj, '.gitignore', 'ignored.log\nbuild/\n');
    write(proj, 'src/app.py', 'print("v1")\n');
    git(proj, 'init', '-q');
    git(proj, 'add', '.');
    git(proj, 'commit', '-qm', 'init');
    write(proj, 'notes.txt', 'untracked\n');
    write(proj, 'ignored.log', 'noise\n');
    write(proj, 'build/out.bin', 'bin\n');
    symlinkSync('/etc/hostname', join(proj, 'leak'));
    const agent = script(work, 'git.jsonl', [
      call('execute_shell', {
        command: 'git status --porcelain; echo ---; find . -path ./.git -prune -o -print | sort',
      }),
      call('execute_shell', { command: 'cat src/app.py notes.txt' }),
      final('looked'),
    ]);
    const run = await cli([
      'run',
      proj,
      '--goal',
      'Look around',
      '--verify',
      'test -f notes.txt',
      '--agent',
      `scripted:${agent}`,
      '--json',
    ]);
    const out = parseJsonOutput<RunJson>(run);
    expect(out.status, run.stderr).toBe('succeeded');
    expect(run.stderr).toMatch(/workspace from .*repo: \d+ files, .* \(the files git sees\)/);
    expect(run.stderr).toMatch(/skipped leak: a symlink to \/etc\/hostname, outside the folder/);
    const [status, cat] = outputs(out.trace);
    // git sees the checkout as on the host: the untracked file only (the ignored ones are not there at all).
    expect(status.split('---')[0].trim()).toBe('?? notes.txt');
    const files = status.split('---')[1].trim().split('\n');
    expect(files).toEqual(['.', './.gitignore', './notes.txt', './src', './src/app.py']);
    expect(cat).toBe('print("v1")\nuntracked\n');
    const warned = warnings(out.trace).find((w) => w.code === 'workspace_skipped');
    expect(warned?.message).toMatch(/leak \(a symlink to \/etc\/hostname, outside the folder\)/);
    const header = readTraceFile(out.trace).header;
    expect(header.task).toMatchObject({ name: 'repo', goal: 'Look around', workspace: { from: proj } });

    // The folder changes on disk: what was recorded stays what a fork and a replay see.
    write(proj, 'src/app.py', 'print("v2")\n');
    rmSync(join(proj, 'notes.txt'));
    const forkAgent = script(work, 'fork.jsonl', [
      call('execute_shell', { command: 'cat src/app.py notes.txt' }),
      final('ok'),
    ]);
    const fork = parseJsonOutput<RunJson>(
      await cli(['fork', out.episode, '--at', '0', '--agent', `scripted:${forkAgent}`, '--json']),
    );
    expect(fork.status).toBe('succeeded');
    expect(outputs(fork.trace)).toEqual(['print("v1")\nuntracked\n']);
    const replay = parseJsonOutput<{ diverged_at: number | null; workspace_diverged_at: number | null }>(
      await cli(['replay', out.episode, '--verify', '--json']),
    );
    expect(replay).toMatchObject({ diverged_at: null, workspace_diverged_at: null });

    // Snapshot 0 travels in a bundle: on another machine (home), without the folder at all.
    const bundle = join(work, 'repo.stepbox');
    expect((await cli(['bundle', 'export', out.episode, bundle])).code).toBe(0);
    rmSync(proj, { recursive: true, force: true });
    const other = { STEPBOX_HOME: join(work, 'home2') };
    expect((await cli(['bundle', 'import', bundle], other)).code).toBe(0);
    const far = parseJsonOutput<RunJson>(
      await cli(['fork', out.episode, '--at', '0', '--agent', `scripted:${forkAgent}`, '--json'], other),
    );
    expect(outputs(far.trace)).toEqual(['print("v1")\nuntracked\n']);
  });

  it('a folder that is not a checkout: every file, dot and ignored-looking ones too; fifos, sockets and escaping links skipped and listed', async () => {
    const proj = join(work, 'plain');
    write(proj, '.gitignore', '*.log\n');
    write(proj, 'a.log', 'kept\n');
    write(proj, 'deep/er/b.txt', 'b\n');
    symlinkSync('deep/er/b.txt', join(proj, 'inside'));
    symlinkSync('../../etc', join(proj, 'deep/out'));
    execFileSync('mkfifo', [join(proj, 'pipe')]);
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(join(proj, 'sock'), resolve));
    try {
      const agent = script(work, 'plain.jsonl', [
        call('execute_shell', { command: 'find . | sort; cat inside' }),
        final('done'),
      ]);
      const run = await cli(['run', proj, '--goal', 'List', '--agent', `scripted:${agent}`, '--json']);
      const out = parseJsonOutput<RunJson>(run);
      expect(out.status, run.stderr).toBe('failed'); // no verifier: failed by definition
      expect(outputs(out.trace)[0]).toBe(
        ['.', './.gitignore', './a.log', './deep', './deep/er', './deep/er/b.txt', './inside', 'b', ''].join(
          '\n',
        ),
      );
      for (const line of [
        /skipped deep\/out: a symlink to \.\.\/\.\.\/etc, outside the folder/,
        /skipped pipe: a fifo/,
        /skipped sock: a socket/,
      ])
        expect(run.stderr).toMatch(line);
      expect(warnings(out.trace).find((w) => w.code === 'workspace_skipped')?.message).toMatch(
        /^3 path\(s\) of .*plain were not copied: deep\/out .*; pipe .*; sock /,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('task init writes the task run DIR uses; workspace.from with files written over it and setup after, the task file itself left out', async () => {
    const proj = join(work, 'inited');
    write(proj, 'config.txt', 'from the folder\n');
    write(proj, 'keep.txt', 'kept\n');
    const init = await cli([
      'task',
      'init',
      proj,
      '--goal',
      'Check config',
      '--verify',
      'grep -q setup ran.txt',
    ]);
    expect(init.code, init.stderr).toBe(0);
    const taskPath = join(proj, 'task.json');
    const task = JSON.parse(readFileSync(taskPath, 'utf8')) as Record<string, { [k: string]: unknown }>;
    expect(task).toMatchObject({ name: 'inited', goal: 'Check config', workspace: { from: '.' } });
    // Refuses to overwrite without --force.
    const again = await cli(['task', 'init', proj, '--goal', 'x']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/task\.json exists already: edit it, or add --force/);
    task.workspace = {
      ...task.workspace,
      files: { 'config.txt': 'from files\n' },
      setup: ['cat config.txt > ran.txt; echo setup >> ran.txt'],
    };
    writeFileSync(taskPath, JSON.stringify(task));
    const agent = script(work, 'init.jsonl', [
      call('execute_shell', { command: 'ls; cat ran.txt' }),
      final('ok'),
    ]);
    const run = await cli(['run', proj, '--agent', `scripted:${agent}`, '--json']);
    const out = parseJsonOutput<RunJson>(run);
    expect(out.status, run.stderr).toBe('succeeded');
    expect(outputs(out.trace)).toEqual(['config.txt\nkeep.txt\nran.txt\nfrom files\nsetup\n']);
    expect(readTraceFile(out.trace).header.task_path).toBe(taskPath);
  });
});

describe('a project folder: bad input is refused naming the field and the fix (no Docker needed)', () => {
  it('a missing folder, a file, no --goal, and a folder over the import limit', async () => {
    const proj = join(work, 'errs');
    write(proj, 'node_modules/dep/index.js', 'x'.repeat(4096));
    write(proj, 'main.py', 'print(1)\n');
    const cases: [string[], RegExp][] = [
      [
        ['run', join(work, 'missing'), '--goal', 'g'],
        /missing does not exist: give a project folder or a task\.json/,
      ],
      [
        ['run', join(proj, 'main.py'), '--goal', 'g'],
        /main\.py is a file, not a folder: give the project folder that holds it/,
      ],
      [['run', proj], /has no task\.json, so the goal must come from --goal: add --goal/],
      [
        ['run', proj, '--goal', 'g', '--import-limit', '2k'],
        /over the import limit of 2\.0 KiB \(workspace\.import_limit, default 1g\)\. Biggest: node_modules\/ 4\.0 KiB, main\.py 9 B\. .*--import-limit 2g/,
      ],
      [
        ['task', 'init', join(work, 'missing')],
        /missing does not exist: give a project folder \(check the path\)/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args[0] === 'run' ? [...args, '--agent', 'scripted:none.jsonl'] : args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
