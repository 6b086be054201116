import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { biggestPaths, listFolder } from '../../electron/engine/harness/folder-listing.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'stepbox-listing-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(rel: string, content = 'x'): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), content);
}

const paths = (l: ReturnType<typeof listFolder>) => l.entries.map((e) => e.path);
const git = (...args: string[]) =>
  execFileSync('git', ['-C', root, '-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {
    stdio: 'ignore',
  });

describe('listFolder: which files of a project folder become the workspace', () => {
  it('a folder that is not a git checkout: every file and folder, dot files too', () => {
    write('a.txt');
    write('src/b.txt', 'bbb');
    write('.env');
    write('.gitignore', 'a.txt\n');
    mkdirSync(join(root, 'empty'));
    const l = listFolder(root);
    expect(l.mode).toBe('all');
    expect(paths(l)).toEqual(['.env', '.gitignore', 'a.txt', 'empty', 'src', 'src/b.txt']);
    expect(l.bytes).toBe(1 + 'a.txt\n'.length + 1 + 3);
    expect(l.entries.find((e) => e.path === 'src/b.txt')).toMatchObject({ type: 'file', size: 3 });
  });

  it('a git checkout: tracked and untracked files, .gitignored ones left out, .git itself kept, parents listed', () => {
    write('.gitignore', 'ignored.log\nbuild/\n');
    write('src/deep/tracked.txt');
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'init');
    write('untracked.txt');
    write('ignored.log');
    write('build/out.bin');
    const l = listFolder(root);
    expect(l.mode).toBe('git');
    const listed = paths(l);
    expect(listed).toEqual(
      expect.arrayContaining(['.gitignore', 'src', 'src/deep', 'src/deep/tracked.txt', 'untracked.txt']),
    );
    expect(listed).toContain('.git');
    expect(listed).toContain('.git/HEAD');
    expect(listed).not.toContain('ignored.log');
    expect(listed.some((p) => p.startsWith('build'))).toBe(false);
  });

  it('a tracked file deleted from the working tree is not listed (the workspace is what is on disk)', () => {
    write('gone.txt');
    write('kept.txt');
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'init');
    rmSync(join(root, 'gone.txt'));
    expect(paths(listFolder(root))).not.toContain('gone.txt');
  });

  it('a folder inside a checkout: the files git sees there, without .git', () => {
    write('.gitignore', '*.log\n');
    write('sub/a.txt');
    write('sub/b.log');
    git('init', '-q');
    const l = listFolder(join(root, 'sub'));
    expect(l.mode).toBe('git');
    expect(paths(l)).toEqual(['a.txt']);
    expect(l.notes.join('\n')).toMatch(/inside a git checkout/);
  });

  it('without git installed, a checkout is copied whole and says so', () => {
    write('a.txt');
    write('ignored.log');
    write('.gitignore', 'ignored.log\n');
    git('init', '-q');
    const l = listFolder(root, { git: join(root, 'no-such-git') });
    expect(l.mode).toBe('all');
    expect(paths(l)).toContain('ignored.log');
    expect(l.notes.join('\n')).toMatch(/git is not installed/);
  });

  it('a .git that is a file (a git worktree) is skipped and listed: its repository is elsewhere', () => {
    write('main/a.txt');
    execFileSync('git', ['-C', join(root, 'main'), 'init', '-q'], { stdio: 'ignore' });
    execFileSync('git', ['-C', join(root, 'main'), '-c', 'user.email=t@t', '-c', 'user.name=t', 'add', '.'], {
      stdio: 'ignore',
    });
    execFileSync(
      'git',
      ['-C', join(root, 'main'), '-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'i'],
      { stdio: 'ignore' },
    );
    execFileSync('git', ['-C', join(root, 'main'), 'worktree', 'add', '-q', join(root, 'wt')], {
      stdio: 'ignore',
    });
    const l = listFolder(join(root, 'wt'));
    expect(l.mode).toBe('git');
    expect(paths(l)).toEqual(['a.txt']);
    expect(l.skipped).toEqual([
      { path: '.git', why: expect.stringMatching(/worktree/) as unknown as string },
    ]);
  });

  it('symlinks inside stay links; links leaving the folder are skipped and listed; an absolute link inside becomes relative', () => {
    write('a.txt');
    write('dir/b.txt');
    symlinkSync('a.txt', join(root, 'inside'));
    symlinkSync('../a.txt', join(root, 'dir/up'));
    symlinkSync('/etc/passwd', join(root, 'abs-out'));
    symlinkSync('../../etc', join(root, 'dir/rel-out'));
    symlinkSync(join(root, 'dir/b.txt'), join(root, 'abs-in'));
    const l = listFolder(root);
    const byPath = new Map(l.entries.map((e) => [e.path, e]));
    expect(byPath.get('inside')).toMatchObject({ type: 'symlink', target: 'a.txt', size: 5 });
    expect(byPath.get('dir/up')).toMatchObject({ type: 'symlink', target: '../a.txt' });
    expect(byPath.get('abs-in')).toMatchObject({ type: 'symlink', target: 'dir/b.txt' });
    expect(byPath.has('abs-out')).toBe(false);
    expect(byPath.has('dir/rel-out')).toBe(false);
    expect(l.skipped.map((s) => s.path)).toEqual(['abs-out', 'dir/rel-out']);
    expect(l.skipped[0].why).toMatch(/outside the folder/);
  });

  it('a symlinked folder is a link, never followed', () => {
    const outside = mkdtempSync(join(tmpdir(), 'stepbox-outside-'));
    try {
      writeFileSync(join(outside, 'secret'), 's');
      symlinkSync(outside, join(root, 'linked'));
      const l = listFolder(root);
      expect(paths(l)).toEqual([]);
      expect(l.skipped.map((s) => s.path)).toEqual(['linked']);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('fifos and sockets are skipped and listed', async () => {
    write('a.txt');
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(join(root, 'sock'), resolve));
    try {
      const l = listFolder(root);
      expect(paths(l)).toEqual(['a.txt']);
      expect(l.skipped).toEqual([
        { path: 'pipe', why: expect.stringMatching(/^a fifo/) as unknown as string },
        { path: 'sock', why: expect.stringMatching(/^a socket/) as unknown as string },
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a name that is not valid UTF-8 is skipped and listed, in a plain folder and in a checkout (it was dropped without a word)', () => {
    write('ok.txt');
    // Node names files by strings: a Buffer path makes the byte 0xff, which no UTF-8 string holds.
    writeFileSync(Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff])]), 'x');
    mkdirSync(Buffer.concat([Buffer.from(`${root}/dir`), Buffer.from([0xfe])]));
    const why = 'its name is not valid UTF-8';
    const plain = listFolder(root);
    expect(paths(plain)).toEqual(['ok.txt']);
    expect(plain.skipped).toEqual([
      { path: 'bad\uFFFD', why },
      { path: 'dir\uFFFD', why },
    ]);
    git('init', '-q');
    git('add', '.');
    const checkout = listFolder(root);
    expect(checkout.mode).toBe('git');
    expect(paths(checkout).filter((p) => !p.startsWith('.git'))).toEqual(['ok.txt']);
    expect(checkout.skipped).toEqual([{ path: 'bad\uFFFD', why }]);
  });

  it('excluded paths (the task file in its own folder) are left out; set-id bits are dropped', () => {
    write('task.json', '{}');
    write('run.sh');
    execFileSync('chmod', ['4755', join(root, 'run.sh')]);
    const l = listFolder(root, { exclude: ['task.json'] });
    expect(paths(l)).toEqual(['run.sh']);
    expect(l.entries[0].mode).toBe(0o755);
  });

  it('stops listing once the files seen pass stopAfterBytes (a home folder is not walked whole to be refused)', () => {
    for (let i = 0; i < 20; i++) write(`d${i}/f.bin`, 'x'.repeat(100));
    const all = listFolder(root);
    expect(all.truncated).toBe(false);
    expect(all.bytes).toBe(2000);
    const cut = listFolder(root, { stopAfterBytes: 250 });
    expect(cut.truncated).toBe(true);
    expect(cut.bytes).toBe(300);
  });

  it('biggestPaths sums each top-level folder', () => {
    write('node_modules/a/x.js', 'x'.repeat(300));
    write('node_modules/b.js', 'x'.repeat(200));
    write('big.bin', 'x'.repeat(400));
    write('small.txt', 'x');
    expect(biggestPaths(listFolder(root), 2)).toEqual([
      { path: 'node_modules/', bytes: 500 },
      { path: 'big.bin', bytes: 400 },
    ]);
  });
});
