import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { widerThanDefaults } from '../../shared/isolation-policy.js';
import { parseTask, SandboxSpec } from '../../shared/task.js';
import { workdirProblem } from '../../shared/workdir.js';
import { buildContextHash, resolveBuild } from '../../electron/engine/docker/build-image.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { prepareScript } from '../../electron/engine/docker/engine-flavour.js';
import { readTar } from '../../electron/engine/docker/tar-reader.js';
import { tarEnd, tarHeader, tarPadding } from '../../electron/engine/docker/tar-writer.js';
import { buildContextEntries } from '../../electron/engine/folder-files.js';
import { parseJsonc, readDevcontainer } from '../../electron/engine/harness/devcontainer.js';
import { loadHarborTask } from '../../electron/engine/harness/harbor-task.js';
import { loadWorld } from '../../electron/engine/harness/load-world.js';
import type { AppError } from '../../shared/errors.js';
import type { Result } from '../../shared/result.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { sandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { overlayEntries } from '../../electron/engine/sandbox/workspace-seed.js';
import { resolveToolPath } from '../../electron/engine/tools/paths.js';
import { matchesPathPattern } from '../../shared/qa/path-pattern.js';
import { HistoryHookFilter } from '../../electron/engine/docker/terminal.js';

const dir = mkdtempSync(join(tmpdir(), 'stepbox-world-build-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sandbox.workdir', () => {
  it('is an absolute, normal path clear of what the sandbox and the system need', () => {
    expect(workdirProblem('/app')).toBeNull();
    expect(workdirProblem('/workspaces/project')).toBeNull();
    expect(workdirProblem('/opt/app')).toBeNull();
    for (const bad of [
      '/',
      'app',
      '/app/',
      '/a/../b',
      '/tmp',
      '/tmp/x',
      '/home',
      '/home/agent',
      '/usr/src',
      '/etc',
      '/run/stepbox',
      '/proc',
    ])
      expect(workdirProblem(bad), bad).not.toBeNull();
    const parsed = parseTask({ name: 'n', goal: 'g', sandbox: { workdir: '/etc' } });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toMatch(/sandbox\.workdir.*overlaps \/etc/);
  });

  it("is the container's tmpfs, cwd and (on Podman) chowned folder; relative tool paths and terminal files resolve against it", () => {
    const config = sandboxConfig(SandboxSpec.parse({ workdir: '/app', env: { A: '1', HOME: '/x' } }));
    const spec = containerSpec(config, 'owner');
    expect(spec.WorkingDir).toBe('/app');
    expect(Object.keys(spec.HostConfig?.Tmpfs ?? {})).toContain('/app');
    expect(Object.keys(spec.HostConfig?.Tmpfs ?? {})).not.toContain('/workspace');
    expect(spec.Env).toContain('A=1');
    expect(spec.Env).toContain('HOME=/home/agent'); // the fixed variables win
    expect(prepareScript('podman', 'none', '/app')).toMatch(/chown 1000:1000 \/app \/home\/agent/);
    expect(resolveToolPath('src/x.py', '/app')).toBe('/app/src/x.py');
    expect(resolveToolPath('x')).toBe('/workspace/x');
    const files = Buffer.from('/app/a.txt\n/workspace/b\n').toString('base64');
    const filter = new HistoryHookFilter('/app', 'k');
    filter.typed('touch a.txt\r');
    const out = filter.push(
      `\x1b]6973;k;1;0;${Buffer.from('/app').toString('base64')};${Buffer.from('  1  touch a.txt').toString('base64')};${files}\x07`,
    );
    expect(out.commands[0].files).toEqual(['a.txt']);
    // QA compares a path in /app with the task's patterns as it does one in /workspace.
    expect(matchesPathPattern('/app/tests/test_x.py', 'tests/', '/app')).toBe(true);
    expect(matchesPathPattern('/workspace/tests/test_x.py', 'tests/')).toBe(true);
  });
});

describe("overlayEntries: a project folder over the image's own files", () => {
  it('keeps the image files the folder lacks; the folder wins, and a file hides what lay below it', () => {
    const f = (path: string, hash = 'a'.repeat(64)) => ({
      path,
      type: 'file' as const,
      mode: 0o644,
      size: 1,
      hash,
    });
    const d = (path: string) => ({ path, type: 'dir' as const, mode: 0o755, size: 0 });
    const merged = overlayEntries(
      [f('img.txt'), f('same.txt'), d('lib'), f('lib/x')],
      [f('same.txt', 'b'.repeat(64)), f('lib'), f('mine.txt')],
    );
    expect(merged.map((e) => `${e.path}:${e.type}`)).toEqual([
      'img.txt:file',
      'lib:file',
      'mine.txt:file',
      'same.txt:file',
    ]);
    expect(merged.find((e) => e.path === 'same.txt')?.hash).toBe('b'.repeat(64));
  });
});

describe('tar reader', () => {
  it('reads the entries of an archive as the engine writes it, long names included', async () => {
    const header = (name: string, size: number, type: string, link = '') => {
      const b = Buffer.alloc(512);
      b.write(name, 0, 100);
      b.write('0000644\0', 100);
      b.write(size.toString(8).padStart(11, '0') + '\0', 124);
      b.fill(' ', 148, 156);
      b.write(type, 156);
      b.write(link, 157, 100);
      b.write('ustar\0', 257);
      b.write('00', 263);
      let sum = 0;
      for (const x of b) sum += x;
      b.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
      return b;
    };
    const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);
    const long = 'app/' + 'd'.repeat(120) + '/f.txt';
    const tar = Buffer.concat([
      header('app/', 0, '5'),
      header('app/a.txt', 2, '0'),
      Buffer.from('hi'),
      pad(2),
      header('././@LongLink', long.length + 1, 'L'),
      Buffer.from(long + '\0'),
      pad(long.length + 1),
      header('ignored', 3, '0'),
      Buffer.from('abc'),
      pad(3),
      header('app/l', 0, '2', 'a.txt'),
      Buffer.alloc(1024),
    ]);
    async function* chunks() {
      for (let i = 0; i < tar.length; i += 700) yield tar.subarray(i, i + 700);
    }
    const entries = await readTar(chunks(), 1024);
    expect(entries.map((e) => `${e.type} ${e.path}`)).toEqual([
      'dir app',
      'file app/a.txt',
      `file ${long}`,
      'symlink app/l',
    ]);
    expect(entries[1].content.toString()).toBe('hi');
    expect(entries[3].target).toBe('a.txt');
    await expect(readTar(chunks(), 3)).rejects.toThrow(/more than 3 bytes/);
  });
});

describe('sandbox.build', () => {
  it('resolves a Dockerfile, a folder or {context, dockerfile}; a missing one names the fix', () => {
    const ctx = join(dir, 'ctx');
    mkdirSync(join(ctx, 'docker'), { recursive: true });
    writeFileSync(join(ctx, 'Dockerfile'), 'FROM stepbox-sandbox:2\n');
    writeFileSync(join(ctx, 'docker', 'Dev.Dockerfile'), 'FROM stepbox-sandbox:2\n');
    expect(resolveBuild('ctx', dir)).toEqual({ context: ctx, dockerfile: join(ctx, 'Dockerfile') });
    expect(resolveBuild('ctx/Dockerfile', dir)).toEqual({
      context: ctx,
      dockerfile: join(ctx, 'Dockerfile'),
    });
    expect(resolveBuild({ context: 'ctx', dockerfile: 'docker/Dev.Dockerfile' }, dir).dockerfile).toBe(
      join(ctx, 'docker', 'Dev.Dockerfile'),
    );
    expect(() => resolveBuild('nope', dir)).toThrow(/does not exist/);
    expect(() => resolveBuild({ context: 'ctx', dockerfile: '../x' }, dir)).toThrow(/outside its context/);
    expect(() => resolveBuild('ctx/docker', dir)).toThrow(/no Dockerfile/);
  });

  it('is cached by the content of its context: a change anywhere in it is a new tag', () => {
    const ctx = join(dir, 'hash');
    mkdirSync(ctx, { recursive: true });
    writeFileSync(join(ctx, 'Dockerfile'), 'FROM stepbox-sandbox:2\n');
    writeFileSync(join(ctx, 'a.txt'), 'a');
    const spec = { context: ctx, dockerfile: join(ctx, 'Dockerfile') };
    const h1 = buildContextHash(spec);
    expect(buildContextHash(spec)).toBe(h1);
    writeFileSync(join(ctx, 'a.txt'), 'b');
    expect(buildContextHash(spec)).not.toBe(h1);
  });

  it('is a widening a recorded task needs --allow-image for', () => {
    const w = widerThanDefaults(SandboxSpec.parse({ build: 'Dockerfile' }));
    expect(w.map((x) => `${x.kind}:${x.field}`)).toEqual(['image:sandbox.build']);
    expect(widerThanDefaults(SandboxSpec.parse({ workdir: '/app' }))).toEqual([]);
  });
});

describe('devcontainer.json', () => {
  it('is JSONC: comments and trailing commas are fine; anything else names its line and column', () => {
    const good = parseJsonc('// c\n{\n  "a": "x // not a comment", /* b */\n  "b": [1, 2,],\n}\n', 'f.json');
    expect(good.ok && good.value).toEqual({ a: 'x // not a comment', b: [1, 2] });
    const bad = parseJsonc('{\n  "a": 1\n  "b": 2\n}\n', 'f.json');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toMatch(/f\.json is not JSON with comments at line 3, column 3/);
  });

  it('becomes a task: image or build (relative to its folder), env, lifecycle commands as setup, workspaceFolder', () => {
    const project = join(dir, 'proj');
    mkdirSync(join(project, '.devcontainer'), { recursive: true });
    writeFileSync(
      join(project, '.devcontainer', 'devcontainer.json'),
      JSON.stringify({
        build: { dockerfile: 'Dockerfile', context: '..' },
        containerEnv: { A: '1' },
        onCreateCommand: ['echo', "it's"],
        postCreateCommand: { one: 'make', two: ['npm', 'ci'] },
        workspaceFolder: '/workspaces/${localWorkspaceFolderBasename}',
        capAdd: ['SYS_ADMIN'],
        initializeCommand: 'rm -rf ~',
      }),
    );
    const r = readDevcontainer(project, { goal: 'g' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.input.sandbox).toEqual({
      build: { context: project, dockerfile: '.devcontainer/Dockerfile' },
      env: { A: '1' },
      workdir: '/workspaces/proj',
    });
    expect(r.value.input.workspace).toEqual({ from: project, setup: ["echo 'it'\\''s'", 'make', 'npm ci'] });
    expect(r.value.notes.filter((n) => n.startsWith('warning:'))).toEqual([
      expect.stringMatching(/"capAdd" is not honoured/),
      expect.stringMatching(/"initializeCommand" is not honoured \(it would run on your machine/),
    ]);
    writeFileSync(join(project, '.devcontainer', 'devcontainer.json'), '{"forwardPorts": [1]}');
    const none = readDevcontainer(project, { goal: 'g' });
    expect(!none.ok && none.error.message).toMatch(/names no image: add "image"/);
  });

  it('never builds from a context past the project, nor reads a devcontainer.json through a link', () => {
    // VS Code builds any context it is given: "/" would send the whole disk to the engine, and COPY takes any file of it.
    const project = join(dir, 'hostile');
    const dc = join(project, '.devcontainer');
    mkdirSync(dc, { recursive: true });
    writeFileSync(join(dc, 'Dockerfile'), 'FROM stepbox-sandbox:2\nCOPY secret.txt /stolen');
    writeFileSync(join(dir, 'secret.txt'), 'SECRET=hunter2');
    symlinkSync(dir, join(project, 'up'));
    const refused = (doc: unknown, what: RegExp) => {
      writeFileSync(join(dc, 'devcontainer.json'), JSON.stringify(doc));
      const r = readDevcontainer(project, { goal: 'g' });
      expect(r.ok, JSON.stringify(doc)).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('invalid_task');
        expect(r.error.message).toMatch(what);
        expect(r.error.message).toContain(`name a folder inside the project ${project}`);
      }
    };
    refused({ build: { dockerfile: 'Dockerfile', context: '/' } }, /: build\.context "\/" is \/, outside /);
    refused(
      { build: { dockerfile: 'Dockerfile', context: '../..' } },
      /build\.context "\.\.\/\.\." is .*, outside /,
    );
    refused(
      { dockerFile: 'Dockerfile', context: '../up' },
      /: context "\.\.\/up" is a symbolic link to .*, outside /,
    );
    // The project itself (".." from .devcontainer/) and a folder in it are fine, once the link out of it is gone.
    writeFileSync(join(dc, 'devcontainer.json'), '{"build": {"dockerfile": "Dockerfile", "context": ".."}}');
    const linked = readDevcontainer(project, { goal: 'g' });
    expect(!linked.ok && linked.error.message).toMatch(/: up in the build context is a symbolic link to /);
    rmSync(join(project, 'up'));
    expect(readDevcontainer(project, { goal: 'g' }).ok).toBe(true);
    writeFileSync(join(dc, 'devcontainer.json'), '{"build": {"dockerfile": "Dockerfile"}}');
    expect(readDevcontainer(project, { goal: 'g' }).ok).toBe(true);
    // The file itself through a link (another project's, its containerEnv secrets with it).
    const other = join(dir, 'other.json');
    writeFileSync(other, '{"image": "x", "containerEnv": {"TOKEN": "ghp_secret"}}');
    rmSync(join(dc, 'devcontainer.json'));
    symlinkSync(other, join(dc, 'devcontainer.json'));
    const linkedFile = readDevcontainer(project, { goal: 'g' });
    expect(!linkedFile.ok && linkedFile.error.message).toMatch(
      /devcontainer\.json is a symbolic link to .*other\.json, outside/,
    );
  });
});

describe("a build context's symbolic links: one rule for task files, devcontainers and Harbor tasks", () => {
  // A cloned project's context may hold a link out of it. The engine would get it as a link
  // (COPY copies it dangling), but the client reads .dockerignore through one, and no image
  // needs one: refused at load (and at the build), naming the link, its target and the fix.
  const outside = join(dir, 'links-outside');
  mkdirSync(join(outside, 'home'), { recursive: true });
  writeFileSync(join(outside, 'shadow'), 'root:$6$hash');

  /** The three worlds that build, each with its context folder and its loader. */
  const worlds: Record<string, (root: string) => { ctx: string; load: () => Result<unknown, AppError> }> = {
    'task.json': (root) => {
      mkdirSync(join(root, 'ctx'), { recursive: true });
      writeFileSync(join(root, 'ctx/Dockerfile'), 'FROM stepbox-sandbox:2\nCOPY . /x\n');
      writeFileSync(
        join(root, 'task.json'),
        JSON.stringify({ name: 't', goal: 'g', sandbox: { build: 'ctx' } }),
      );
      return { ctx: join(root, 'ctx'), load: () => loadWorld(join(root, 'task.json')) };
    },
    devcontainer: (root) => {
      mkdirSync(join(root, '.devcontainer'), { recursive: true });
      writeFileSync(join(root, '.devcontainer/Dockerfile'), 'FROM stepbox-sandbox:2\n');
      writeFileSync(
        join(root, '.devcontainer/devcontainer.json'),
        '{"build": {"dockerfile": "Dockerfile", "context": "."}}',
      );
      return { ctx: join(root, '.devcontainer'), load: () => readDevcontainer(root, { goal: 'g' }) };
    },
    harbor: (root) => {
      cpSync(join(PROJECT_ROOT, 'test/fixtures/harbor/dockerfile-app'), root, { recursive: true });
      return { ctx: join(root, 'environment'), load: () => loadHarborTask(root) };
    },
  };

  /** Each way out: what to put in a context, the link's path in it and its target as shown. */
  const escapes: [string, (ctx: string) => void, string, string][] = [
    [
      'an absolute link',
      (ctx) => symlinkSync(join(outside, 'shadow'), join(ctx, 'secret')),
      'secret',
      join(outside, 'shadow'),
    ],
    [
      'a relative link climbing out (whether or not its place exists)',
      (ctx) => symlinkSync('../../../../../../../../../../no-such-file', join(ctx, 'up')),
      'up',
      '../../../../../../../../../../no-such-file',
    ],
    ['a link to a folder', (ctx) => symlinkSync(outside, join(ctx, 'home')), 'home', outside],
    [
      'a chain whose every link reads as inside',
      (ctx) => {
        // here -> . is inside; out -> here/../x reads as ctx/x, but the machine resolves it to ctx/../x.
        writeFileSync(join(dirname(ctx), 'beside.txt'), 'the project next to the context');
        symlinkSync('.', join(ctx, 'here'));
        symlinkSync('here/../beside.txt', join(ctx, 'out'));
      },
      'out',
      'here/../beside.txt',
    ],
    [
      'a link in a nested folder',
      (ctx) => {
        mkdirSync(join(ctx, 'a/b'), { recursive: true });
        symlinkSync('/etc', join(ctx, 'a/b/etc'));
      },
      'a/b/etc',
      '/etc',
    ],
    [
      'a .dockerignore that is itself a link (the client reads it through the link)',
      (ctx) => {
        writeFileSync(join(outside, 'ignore'), 'Dockerfile\n');
        symlinkSync(join(outside, 'ignore'), join(ctx, '.dockerignore'));
      },
      '.dockerignore',
      join(outside, 'ignore'),
    ],
  ];

  let n = 0;
  for (const [kind, make] of Object.entries(worlds))
    for (const [how, put, link, target] of escapes)
      it(`${kind}: ${how} is refused, naming the link, its target and the fix`, () => {
        const world = make(join(dir, `links-${n++}`));
        expect(world.load().ok, 'the world before the link').toBe(true);
        put(world.ctx);
        const r = world.load();
        expect(r.ok).toBe(false);
        if (r.ok) return;
        expect(r.error.code).toBe('invalid_task');
        expect(r.error.message).toContain(link);
        expect(r.error.message).toContain(`symbolic link to ${target}`);
        if (link !== '.dockerignore') {
          expect(r.error.message).toContain(`outside ${world.ctx}`);
          expect(r.error.message).toContain(`a line ${link} in ${join(world.ctx, '.dockerignore')}`);
          // The engine's own gate says the same, for a task that reaches it without the loader.
          expect(() => resolveBuild(world.ctx, dir)).toThrow(
            `${link} in the build context is a symbolic link`,
          );
        }
      });

  it('a link that stays inside, a dangling one, and one .dockerignore leaves out are sent as they are', () => {
    for (const [kind, make] of Object.entries(worlds)) {
      const world = make(join(dir, `links-ok-${kind}`));
      mkdirSync(join(world.ctx, 'v1/.venv/bin'), { recursive: true });
      symlinkSync('v1', join(world.ctx, 'latest'));
      symlinkSync('v1/missing', join(world.ctx, 'dangling'));
      // A project's virtualenv points at this machine's python: leaving it out is the fix the error names.
      symlinkSync('/usr/bin/python3', join(world.ctx, 'v1/.venv/bin/python'));
      symlinkSync(join(outside, 'shadow'), join(world.ctx, 'ignored-secret'));
      writeFileSync(join(world.ctx, '.dockerignore'), '**/.venv\nignored-*\n');
      expect(world.load().ok, kind).toBe(true);
      expect(() => resolveBuild(world.ctx, dir)).not.toThrow();
      // A `!` exception brings the link back into the build: refused again.
      writeFileSync(join(world.ctx, '.dockerignore'), '**/.venv\n!v1/.venv/bin/python\nignored-*\n');
      const back = world.load();
      expect(!back.ok && back.error.message, kind).toMatch(
        /v1\/\.venv\/bin\/python in the build context is a symbolic link to \/usr\/bin\/python3/,
      );
    }
  });
});

describe('what a build sends of its context: exactly what Docker keeps', () => {
  /** A context holding `files` (path → text) and the .dockerignore `rules`. */
  const context = (name: string, files: Record<string, string>, rules?: string) => {
    const ctx = join(dir, name);
    for (const [path, text] of Object.entries({ Dockerfile: 'FROM scratch\n', ...files })) {
      mkdirSync(dirname(join(ctx, path)), { recursive: true });
      writeFileSync(join(ctx, path), text);
    }
    if (rules !== undefined) writeFileSync(join(ctx, '.dockerignore'), rules);
    return ctx;
  };
  const sent = (ctx: string, dockerfile?: string) => {
    const r = buildContextEntries(ctx, 'sandbox.build', dockerfile);
    if (!r.ok) throw new Error(r.error.message);
    return r.value.map((e) => e.path);
  };
  const project = {
    'secret/key': 'S',
    'sub/dir/k.pem': 'P',
    'sub/dir/file': 'F',
    'sub/keep': 'K',
    'a/b/c/id.pem': 'P',
  };

  it('leaves out what a rule names in a nested folder (dockerode matched the rules against absolute paths and sent it)', () => {
    // `docker build` (DOCKER_BUILDKIT=0, the classic builder stepbox talks to) on this context
    // COPYs exactly these: a folder whose contents a rule leaves out is sent empty.
    const ctx = context('nested', project, 'secret/**\n**/*.pem\nsub/dir/file\n');
    expect(sent(ctx)).toEqual([
      '.dockerignore',
      'Dockerfile',
      'a',
      'a/b',
      'a/b/c',
      'secret',
      'sub',
      'sub/dir',
      'sub/keep',
    ]);
  });

  it("walks a left-out folder only for an exception under it, never sending the folder itself; the build's own two files always go", () => {
    const ctx = context(
      'exceptions',
      project,
      '# a comment\nsub\n!sub/dir/file\n  secret  \nDockerfile\n.dockerignore\n*/b\n!**/id.pem\n',
    );
    // `!**/id.pem` names no folder: a/b stays out whole, as Docker walks it.
    expect(sent(ctx)).toEqual(['.dockerignore', 'Dockerfile', 'a', 'sub/dir/file']);
    // A Dockerfile in a left-out folder is sent, and only it.
    const nested = context(
      'dockerfile-inside',
      { 'docker/Dockerfile': 'FROM scratch\n', 'docker/x': 'x' },
      'docker\n',
    );
    expect(sent(nested, 'docker/Dockerfile')).toEqual(['.dockerignore', 'Dockerfile', 'docker/Dockerfile']);
  });

  it('hashes only what it sends: a file a rule leaves out changes no tag', () => {
    const ctx = context('hash', project, 'secret/**\n');
    const spec = { context: ctx, dockerfile: join(ctx, 'Dockerfile') };
    const before = buildContextHash(spec);
    writeFileSync(join(ctx, 'secret/key'), 'rotated');
    expect(buildContextHash(spec)).toBe(before);
    writeFileSync(join(ctx, 'sub/keep'), 'changed');
    expect(buildContextHash(spec)).not.toBe(before);
  });

  it('refuses a fifo, a socket or a device it would send, naming it and the fix; left out, each is fine', async () => {
    const ctx = context('special', {});
    mkdirSync(join(ctx, 'run'));
    const cases: [string, string, () => Promise<() => void> | (() => void)][] = [
      [
        'run/pipe',
        'a fifo (named pipe)',
        () => {
          execFileSync('mkfifo', [join(ctx, 'run/pipe')]);
          return () => rmSync(join(ctx, 'run/pipe'));
        },
      ],
      [
        'run/app.sock',
        'a socket',
        async () => {
          const server = createServer();
          await new Promise<void>((r) => server.listen(join(ctx, 'run/app.sock'), r));
          return () => server.close();
        },
      ],
    ];
    if (process.getuid?.() === 0)
      cases.push([
        'run/null',
        'a character device',
        () => {
          execFileSync('mknod', [join(ctx, 'run/null'), 'c', '1', '3']);
          return () => rmSync(join(ctx, 'run/null'));
        },
      ]);
    for (const [path, kind, make] of cases) {
      const undo = await make();
      const r = buildContextEntries(ctx, 'sandbox.build');
      expect(!r.ok && r.error.message).toBe(
        `sandbox.build: ${path} in the build context is ${kind}: a build sends only files, folders and links; delete it, or leave it out of the build with a line ${path} in ${join(ctx, '.dockerignore')}`,
      );
      expect(() => resolveBuild(ctx, dir)).toThrow(`${path} in the build context is ${kind}`);
      writeFileSync(join(ctx, '.dockerignore'), `${path}\n`);
      expect(sent(ctx)).toEqual(['.dockerignore', 'Dockerfile', 'run']);
      rmSync(join(ctx, '.dockerignore'));
      undo();
    }
  });
});

describe('tar writer', () => {
  it('writes what the reader reads back: folders, files, links, names and targets past ustar', async () => {
    const deep = `${'d'.repeat(120)}/${'e'.repeat(110)}.txt`;
    const tar = Buffer.concat([
      tarHeader({ name: 'app/', size: 0, mode: 0o755, type: 'dir' }),
      tarHeader({ name: 'app/a.txt', size: 2, mode: 0o644, type: 'file' }),
      Buffer.from('hi'),
      tarPadding(2),
      tarHeader({ name: `app/${'n'.repeat(90)}/${'m'.repeat(90)}`, size: 0, mode: 0o644, type: 'file' }),
      tarHeader({ name: deep, size: 1, mode: 0o755, type: 'file' }),
      Buffer.from('x'),
      tarPadding(1),
      tarHeader({ name: 'app/l', size: 0, mode: 0o777, type: 'symlink', linkname: 't'.repeat(150) }),
    ]);
    // A folder's name past 100 bytes is never split at its trailing `/`: the engine reads an empty name as a broken archive.
    const longDir = tarHeader({ name: `${'d'.repeat(120)}/`, size: 0, mode: 0o755, type: 'dir' });
    expect(longDir.subarray(-512).toString('latin1', 0, 100).replace(/\0+$/, '')).not.toBe('');
    const entries = await readTar(Readable.from([tar, longDir, tarEnd()]), 1024);
    expect(entries.map((e) => `${e.type} ${e.path}`)).toEqual([
      'dir app',
      'file app/a.txt',
      `file app/${'n'.repeat(90)}/${'m'.repeat(90)}`,
      `file ${deep}`,
      'symlink app/l',
      `dir ${'d'.repeat(120)}`,
    ]);
    expect(entries[3].mode & 0o777).toBe(0o755);
    expect(entries[4].target).toBe('t'.repeat(150));
  });
});
