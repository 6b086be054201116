import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCaseTask, loadWorld, READERS } from '../../electron/engine/harness/load-world.js';
import { declaredFiles } from '../../electron/engine/qa/qa-reference.js';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'stepbox-world-')));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(rel: string, content: string): string {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), content);
  return join(root, rel);
}

function failure(r: ReturnType<typeof loadWorld>) {
  if (r.ok) throw new Error('expected an error');
  return r.error;
}

describe('loadWorld: one way from a path to a task', () => {
  it('a bare folder with --goal: name from the folder, workspace.from the folder, the verifier from --verify', () => {
    write('proj/main.py', 'print(1)\n');
    const r = loadWorld(join(root, 'proj'), { goal: 'Fix it', verify: 'python3 main.py' });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value.kind).toBe('folder');
    expect(r.value.taskPath).toBeNull();
    expect(r.value.dir).toBe(join(root, 'proj'));
    expect(r.value.task).toMatchObject({
      name: 'proj',
      goal: 'Fix it',
      verifier: { command: 'python3 main.py' },
      workspace: { from: join(root, 'proj') },
    });
    expect(r.value.notes[0]).toMatch(/workspace from .*proj: 1 files, 9 B \(every file\)/);
  });

  it('a task folder: its task.json, workspace.from made absolute against the file’s folder', () => {
    write('task/code/a.txt', 'a');
    write('task/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: 'code' } }));
    const r = loadWorld(join(root, 'task'));
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value).toMatchObject({ kind: 'task', taskPath: join(root, 'task/task.json') });
    expect(r.value.task.workspace.from).toBe(join(root, 'task/code'));
  });

  it("a task file's workspace.from and sandbox.build stay inside its folder, however they leave it", () => {
    write('secret/id_rsa', 'KEY');
    write('secret/Dockerfile', 'FROM x\nCOPY id_rsa /');
    write('task/Dockerfile', 'FROM x');
    mkdirSync(join(root, 'task/sub'));
    symlinkSync(join(root, 'secret'), join(root, 'task/up'));
    const refused = (doc: object, field: string, shown: RegExp) => {
      write('task/task.json', JSON.stringify({ name: 't', goal: 'g', ...doc }));
      const e = failure(loadWorld(join(root, 'task')));
      expect(e.code, JSON.stringify(doc)).toBe('invalid_task');
      expect(e.message).toContain(`${join(root, 'task/task.json')}: ${field} `);
      expect(e.message).toMatch(shown);
      expect(e.message).toMatch(
        /stepbox reads nothing of this machine through a world's links or past its folder/,
      );
    };
    const outside = (p: string) => new RegExp(`is ${p}, outside ${join(root, 'task')}`);
    refused({ workspace: { from: '/etc' } }, 'workspace.from "/etc"', outside('/etc'));
    refused({ workspace: { from: '../../..' } }, 'workspace.from "../../.."', /is \/\S*, outside /);
    refused({ workspace: { from: '../secret' } }, 'workspace.from', outside(join(root, 'secret')));
    refused({ workspace: { from: 'up' } }, 'workspace.from "up"', /is a symbolic link to .*secret, outside/);
    refused({ workspace: { from: 'sub/../..' } }, 'workspace.from', outside(root));
    // A chain whose links each read as inside: here -> . and there -> here/.. (the text folds to
    // the task folder, the kernel climbs out of it), so there/secret is the folder beside it.
    symlinkSync('.', join(root, 'task/here'));
    symlinkSync('here/..', join(root, 'task/there'));
    refused({ workspace: { from: 'there/secret' } }, 'workspace.from', outside(join(root, 'secret')));
    // Said the same whether the place outside exists or not: a task file cannot probe the machine.
    refused({ workspace: { from: '../no-such' } }, 'workspace.from', outside(join(root, 'no-such')));
    refused({ sandbox: { build: '/' } }, 'sandbox.build "/"', outside('/'));
    refused(
      { sandbox: { build: '../secret/Dockerfile' } },
      'sandbox.build',
      /outside .*build the image yourself/,
    );
    refused({ sandbox: { build: { context: '..' } } }, 'sandbox.build.context ".."', outside(root));
    refused({ sandbox: { build: { context: 'up' } } }, 'sandbox.build.context "up"', /symbolic link/);
    refused(
      { sandbox: { build: { context: '.', dockerfile: '../secret/Dockerfile' } } },
      'sandbox.build.dockerfile',
      outside(join(root, 'secret/Dockerfile')),
    );
    // The task folder as a build context now holds links out of it (up, there): refused by name.
    write('task/task.json', JSON.stringify({ name: 't', goal: 'g', sandbox: { build: '.' } }));
    expect(failure(loadWorld(join(root, 'task'))).message).toMatch(
      /sandbox\.build "\.": there in the build context is a symbolic link to here\/\.\. \(/,
    );
    rmSync(join(root, 'task/up'));
    rmSync(join(root, 'task/there'));
    // Inside, and "~" is a folder's name like any other (nothing expands it).
    write(
      'task/task.json',
      JSON.stringify({ name: 't', goal: 'g', workspace: { from: '.' }, sandbox: { build: '.' } }),
    );
    expect(loadWorld(join(root, 'task')).ok).toBe(true);
    write('task/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: '~/.ssh' } }));
    expect(failure(loadWorld(join(root, 'task'))).message).toContain(
      `names ${join(root, 'task/~/.ssh')}, which does not exist`,
    );
    // A folder elsewhere is the person's to name: run it itself.
    write('secret/a.txt', 'a');
    expect(loadWorld(join(root, 'secret'), { goal: 'g' }).ok).toBe(true);
  });

  it("a case's task file builds only inside its folder", () => {
    write('case/task.json', JSON.stringify({ name: 't', goal: 'g', sandbox: { build: '../../' } }));
    const r = loadCaseTask(join(root, 'case/task.json'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/sandbox\.build "\.\.\/\.\.\/" is .*, outside /);
  });

  it('a missing path names it and what to give', () => {
    const e = failure(loadWorld(join(root, 'nope'), { goal: 'g' }));
    expect(e.code).toBe('not_found');
    expect(e.message).toMatch(/nope does not exist: give a project folder or a task\.json/);
  });

  it('a file that is not a task names the folder to give instead', () => {
    const file = write('proj/main.py', '');
    const e = failure(loadWorld(file, { goal: 'g' }));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toContain(
      `${file} is a file, not a folder: give the project folder that holds it (${join(root, 'proj')})`,
    );
  });

  it('a bare folder without --goal says to add --goal or run task init', () => {
    write('proj/a', '');
    const e = failure(loadWorld(join(root, 'proj')));
    expect(e.code).toBe('usage');
    expect(e.message).toMatch(/has no task\.json, so the goal must come from --goal: add --goal/);
    expect(e.message).toMatch(/stepbox task init .*proj --goal/);
  });

  it('--goal where a task file sets its own is refused, naming the field to edit', () => {
    write('task/task.json', JSON.stringify({ name: 't', goal: 'g' }));
    const e = failure(loadWorld(join(root, 'task'), { goal: 'other' }));
    expect(e.message).toMatch(
      /--goal is for a folder without a task of its own; .* sets its goal: edit it there/,
    );
  });

  it('a folder over the import limit is refused naming its biggest paths and both fixes', () => {
    write('proj/node_modules/x.js', 'x'.repeat(3000));
    write('proj/data.bin', 'x'.repeat(1500));
    write('proj/a.txt', 'x');
    const e = failure(loadWorld(join(root, 'proj'), { goal: 'g', importLimit: '2k' }));
    expect(e.code).toBe('invalid_input');
    expect(e.message).toMatch(
      /holds 4\.4 KiB of files, over the import limit of 2\.0 KiB \(workspace\.import_limit, default 1g\)/,
    );
    expect(e.message).toMatch(/Biggest: node_modules\/ 2\.9 KiB, data\.bin 1\.5 KiB, a\.txt 1 B/);
    expect(e.message).toMatch(/--import-limit 2g, or "workspace": \{"import_limit": "2g"\}/);
  });

  it('the limit is a task key too, and a folder larger than the workspace tmpfs names sandbox.limits.disk', () => {
    write('t1/code/big', 'x'.repeat(2048));
    write(
      't1/task.json',
      JSON.stringify({ name: 't', goal: 'g', workspace: { from: 'code', import_limit: '1k' } }),
    );
    write('t2/code/big', 'x'.repeat(2048));
    expect(failure(loadWorld(join(root, 't1'))).message).toMatch(/over the import limit of 1\.0 KiB/);
    write(
      't2/task.json',
      JSON.stringify({
        name: 't',
        goal: 'g',
        sandbox: { limits: { disk: '1k' } },
        workspace: { from: 'code' },
      }),
    );
    expect(failure(loadWorld(join(root, 't2'))).message).toMatch(
      /more than the sandbox's workspace holds \(sandbox\.limits\.disk 1k\)/,
    );
  });

  it('a file larger than a snapshot keeps is refused (a fork could not bring it back)', () => {
    write('t/code/small', 'x');
    // Sparse: 600 MiB by its size, nothing on disk.
    truncateSync(write('t/code/huge.bin', ''), 600 * 1024 * 1024);
    write(
      't/task.json',
      JSON.stringify({
        name: 't',
        goal: 'g',
        sandbox: { limits: { disk: '2g' } },
        workspace: { from: 'code' },
      }),
    );
    expect(failure(loadWorld(join(root, 't'), { importLimit: '2g' })).message).toMatch(
      /holds files over 512\.0 MiB, the largest a snapshot keeps: huge\.bin 600\.0 MiB\. Leave them out/,
    );
  });

  it('workspace.from naming a missing folder or a file is an error naming the field', () => {
    write('t1/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: 'missing' } }));
    const e1 = failure(loadWorld(join(root, 't1')));
    expect(e1.message).toMatch(
      /workspace\.from in .*t1\/task\.json names .*t1\/missing, which does not exist: fix the path \(it is relative to/,
    );
    write('t2/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: 'task.json' } }));
    expect(failure(loadWorld(join(root, 't2'))).message).toMatch(/a file, not a folder: name the folder/);
  });

  it('an invalid --import-limit is a usage error', () => {
    write('proj/a', '');
    expect(failure(loadWorld(join(root, 'proj'), { goal: 'g', importLimit: 'lots' })).message).toMatch(
      /--import-limit lots: expected a Docker size/,
    );
  });

  it('the task of a case imported from a bundle never copies a folder of this machine by itself', () => {
    write('secret/key', 'k');
    write('cases/x/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: '../../secret' } }));
    write('cases/x/.imported.json', '{}');
    write('cases/x/fixed/task.json', JSON.stringify({ name: 't', goal: 'g', workspace: { from: '/' } }));
    for (const file of ['cases/x/task.json', 'cases/x/fixed/task.json']) {
      const e = failure(loadWorld(join(root, file)));
      expect(e.message).toMatch(/came from a bundle and names a folder of this machine \(workspace\.from/);
    }
  });

  it("a folder's task declares no initial files for QA: state_leak never takes the folder's files for leftovers", () => {
    write('proj/a.txt', 'a');
    const r = loadWorld(join(root, 'proj'), { goal: 'g' });
    if (!r.ok) throw new Error(r.error.message);
    expect(declaredFiles(r.value.task)).toBeNull();
  });

  it('the readers: a task folder before the catch-all bare folder, which is last', () => {
    // A devcontainer folder is read before the catch-all (devcontainer.ts).
    expect(READERS.map((r) => r.kind)).toEqual(['task', 'harbor', 'harbor', 'devcontainer', 'folder']);
    expect(READERS[READERS.length - 1].claims(root)).toBe(true);
  });
});
