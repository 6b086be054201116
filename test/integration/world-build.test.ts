import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { closeTestProvider, describeDocker, testProvider } from '../support/docker.js';
import { ensureBuilt } from '../../electron/engine/docker/build-image.js';
import { sandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { SandboxSpec } from '../../shared/task.js';
import { call, script } from '../support/harness.js';

// Images built from Dockerfiles (sandbox.build, a devcontainer's) and the working directory
// (sandbox.workdir), against the real engine through the CLI as a person runs it.

let dir: string;
let home: string;
/** A token making this run's build contexts (so their tags) its own: the first build is a real one. */
const token = `${process.pid}-${Date.now()}`;
const built = new Set<string>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-world-build-'));
  home = join(dir, 'home');
});
afterAll(() => {
  // Only the images this file built.
  for (const tag of built) {
    try {
      execFileSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, { env: { STEPBOX_HOME: home }, timeoutMs: 180_000 });

/** The text of a run's trace (its `--json` summary names the file; closed traces are gzipped). */
function traceText(summary: { trace: string }): string {
  const raw = readFileSync(summary.trace);
  return (summary.trace.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
}

/** The tags a run's progress lines name, remembered for removal. */
function noteTags(stderr: string): void {
  for (const m of stderr.matchAll(/stepbox-build:[0-9a-f]{24}/g)) built.add(m[0]);
}

describeDocker('sandbox.build, devcontainers and sandbox.workdir on Docker', () => {
  it('a devcontainer folder: its Dockerfile, containerEnv and postCreateCommand hold, unsupported keys are listed once', async () => {
    const project = join(dir, 'dc-project');
    mkdirSync(join(project, '.devcontainer'), { recursive: true });
    writeFileSync(
      join(project, '.devcontainer', 'Dockerfile'),
      `FROM stepbox-sandbox:2\nUSER root\nRUN echo image-mark-${token} > /etc/stepbox-dc-mark\n`,
    );
    writeFileSync(
      join(project, '.devcontainer', 'devcontainer.json'),
      `// JSONC, as editors write it
{
  "name": "dc test",
  "build": { "dockerfile": "Dockerfile", "context": "." },
  /* the environment */
  "containerEnv": { "DC_VAR": "env-${token}", },
  "postCreateCommand": "echo created-${token} > post-create.txt",
  "workspaceFolder": "/workspaces/project",
  "forwardPorts": [3000],
  "features": { "ghcr.io/devcontainers/features/node:1": {} },
  "mounts": ["source=/,target=/host,type=bind"],
  "privileged": true,
  "runArgs": ["--cap-add=SYS_ADMIN"],
}
`,
    );
    writeFileSync(join(project, 'main.py'), "print('hi')\n");
    const agent = script(dir, 'dc.jsonl', [
      call('execute_shell', { command: 'pwd; cat /etc/stepbox-dc-mark; echo "var=$DC_VAR"' }),
      call('read_file', { path: 'main.py' }),
      { content: 'done' },
    ]);
    const run = await cli([
      'run',
      project,
      '--goal',
      'look around',
      '--verify',
      `grep -q created-${token} post-create.txt`,
      '--agent',
      `scripted:${agent}`,
      '--json',
    ]);
    noteTags(run.stderr);
    expect(run.code, run.stderr).toBe(0);
    for (const key of ['forwardPorts', 'features', 'mounts', 'privileged', 'runArgs'])
      expect(run.stderr.split(`"${key}" is not honoured`).length - 1, key).toBe(1);
    const summary = JSON.parse(run.stdout) as { episode: string; status: string; trace: string };
    expect(summary.status).toBe('succeeded');
    const trace = traceText(summary);
    expect(trace).toContain('/workspaces/project\\n');
    expect(trace).toContain(`image-mark-${token}`);
    expect(trace).toContain(`var=env-${token}`);
    expect(trace).toContain("print('hi')");
    // postCreateCommand ran before snapshot 0: the file is in it.
    const at0 = await cli([
      'open',
      summary.episode,
      '--at',
      '0',
      '--allow-image',
      '--exec',
      'cat post-create.txt',
    ]);
    expect(at0.code, at0.stderr).toBe(0);
    expect(at0.stdout).toContain(`created-${token}`);
  });

  it('workdir /app of a built image: its files are snapshot 0, the agent starts there, a fork and a rollback restore them; the second run builds nothing', async () => {
    const taskDir = join(dir, 'app-task');
    mkdirSync(taskDir, { recursive: true });
    writeFileSync(
      join(taskDir, 'Dockerfile'),
      [
        'FROM stepbox-sandbox:2',
        'USER root',
        'WORKDIR /app',
        `RUN echo app-mark-${token} > /app/marker.txt && mkdir -p /app/src && echo 'print(1)' > /app/src/main.py && ln -s marker.txt /app/link`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(taskDir, 'task.json'),
      JSON.stringify({
        name: 'app-workdir',
        goal: 'read the marker',
        sandbox: { build: '.', workdir: '/app' },
        verifier: { command: `test "$(pwd)" = /app && grep -q app-mark-${token} marker.txt` },
      }),
    );
    const agent = script(taskDir, 'agent.jsonl', [
      call('read_file', { path: 'marker.txt' }),
      call('execute_shell', { command: 'pwd; rm marker.txt src/main.py' }),
      { content: 'done' },
    ]);
    const first = await cli(['run', taskDir, '--agent', `scripted:${agent}`, '--json']);
    noteTags(first.stderr);
    expect(first.code, first.stderr).toBe(1); // the agent removed the marker: the verifier fails
    expect(first.stderr).toMatch(/\[build\] building stepbox-build:/);
    const summary = JSON.parse(first.stdout) as { episode: string; trace: string };
    const ep = summary.episode;
    const trace = traceText(summary);
    expect(trace).toContain(`app-mark-${token}`); // relative read_file in /app
    expect(trace).toContain('"stdout":"/app\\n"'); // the agent's shell starts in /app
    // Snapshot 0 lists the image's files as added (they are part of it, not a change before it).
    const snap0 = trace.split('\n').find((l) => l.includes('"type":"snapshot"') && l.includes('"step":0'));
    expect(snap0).toContain('"marker.txt"');
    expect(snap0).toContain('"src/main.py"');

    // Snapshot 0 holds the image's files; step 2 removed two of them; step 1 still has them.
    const at0 = await cli(['open', ep, '--at', '0', '--allow-image', '--exec', 'pwd; ls -A; readlink link']);
    expect(at0.code, at0.stderr).toBe(0);
    expect(at0.stdout).toMatch(/\/app\n/);
    expect(at0.stdout).toContain('marker.txt');
    expect(at0.stdout).toContain('src');
    const at2 = await cli(['open', ep, '--at', '2', '--allow-image', '--exec', 'ls -A; ls src | wc -l']);
    expect(at2.stdout).not.toContain('marker.txt');

    // A fork at 1 restores them (the rollback every fork starts with): the verifier passes.
    // Outside the build context: a file added there would change its hash.
    const forkAgent = script(dir, 'fork.jsonl', [{ content: 'kept it' }]);
    const fork = await cli([
      'fork',
      ep,
      '--at',
      '1',
      '--allow-image',
      '--agent',
      `scripted:${forkAgent}`,
      '--json',
    ]);
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout)).toMatchObject({ status: 'succeeded', fork_step: 1 });

    // The same context again: a cache hit, nothing built.
    const again = await cli(['run', taskDir, '--agent', `scripted:${forkAgent}`, '--json']);
    noteTags(again.stderr); // a miss would build a tag of its own
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/\[build\] stepbox-build:[0-9a-f]{24}: cached/);
    expect(again.stderr).not.toMatch(/\[build\] building/);
    expect(again.stderr).not.toMatch(/\[build\] Step /);
  });

  it('task init on a bare folder with a Dockerfile writes its build, and the run then runs on the image built from it', async () => {
    // The walk: task init wrote a task on the stepbox image and the Dockerfile stayed unused.
    const project = join(dir, 'bare-docker');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'Dockerfile'), `FROM stepbox-sandbox:2\nLABEL mark=init-${token}\n`);
    const init = await cli(['task', 'init', project, '--goal', 'nothing']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`its image is built from ${join(project, 'Dockerfile')}`);
    const agent = script(dir, 'bare-docker.jsonl', [{ content: 'done' }]);
    const run = await cli(['run', project, '--agent', `scripted:${agent}`, '--json']);
    noteTags(run.stderr);
    expect(run.stderr).not.toMatch(/Dockerfile is not used/);
    const header = JSON.parse(traceText(JSON.parse(run.stdout)).split('\n')[0]) as { image: string };
    expect(header.image).toMatch(/^stepbox-build:[0-9a-f]{24}$/);
  });

  it("a recorded task's built image needs --allow-image; a first-hand task file is consent", async () => {
    const taskDir = join(dir, 'consent-task');
    mkdirSync(taskDir, { recursive: true });
    writeFileSync(join(taskDir, 'Dockerfile'), `FROM stepbox-sandbox:2\nLABEL mark=consent-${token}\n`);
    writeFileSync(
      join(taskDir, 'task.json'),
      JSON.stringify({ name: 'consent', goal: 'nothing', sandbox: { build: 'Dockerfile' } }),
    );
    const agent = script(taskDir, 'agent.jsonl', [{ content: 'done' }]);
    const run = await cli(['run', taskDir, '--agent', `scripted:${agent}`, '--json']);
    noteTags(run.stderr);
    expect(run.stdout, run.stderr).toContain('"status"');
    const ep = (JSON.parse(run.stdout) as { episode: string }).episode;
    const refused = await cli(['fork', ep, '--at', '0', '--agent', `scripted:${agent}`]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/sandbox\.image "stepbox-build:[0-9a-f]{24}"/);
    expect(refused.stderr).toContain('--allow-image');
    const allowed = await cli([
      'fork',
      ep,
      '--at',
      '0',
      '--allow-image',
      '--agent',
      `scripted:${agent}`,
      '--json',
    ]);
    expect(allowed.stdout, allowed.stderr).toContain('"fork_step":0');
  });

  it("a sandbox's reset puts the image's own files back (a warm pool's next episode starts from them)", async () => {
    const ctx = join(dir, 'seed-ctx');
    mkdirSync(ctx, { recursive: true });
    writeFileSync(
      join(ctx, 'Dockerfile'),
      `FROM stepbox-sandbox:2\nUSER root\nRUN mkdir -p /srv/app/sub && echo seed-${token} > /srv/app/sub/f.txt && chmod 755 /srv/app/sub/f.txt\n`,
    );
    const provider = await testProvider();
    try {
      const engine = provider.engine;
      const { image } = await ensureBuilt(
        engine.docker,
        { context: ctx, dockerfile: join(ctx, 'Dockerfile') },
        () => undefined,
      );
      built.add(image);
      const sb = await provider.create(sandboxConfig(SandboxSpec.parse({ image, workdir: '/srv/app' })));
      try {
        const first = await sb.exec({
          command: 'pwd; cat sub/f.txt; stat -c %a sub/f.txt; rm -r sub',
          timeoutMs: 10_000,
        });
        expect(first.stdout).toBe(`/srv/app\nseed-${token}\n755\n`);
        await sb.reset();
        const again = await sb.exec({ command: 'cat sub/f.txt', timeoutMs: 10_000 });
        expect(again.stdout).toBe(`seed-${token}\n`);
      } finally {
        await sb.destroy();
      }
    } finally {
      expect(await closeTestProvider(provider)).toEqual([]);
    }
  });

  it('a context holding a link out of it is refused before the engine sees it; left out by .dockerignore, it is never sent', async () => {
    const taskDir = join(dir, 'link-out');
    mkdirSync(taskDir, { recursive: true });
    const hostSecret = join(dir, 'host-secret.txt');
    writeFileSync(hostSecret, `HOST-SECRET-${token}`);
    writeFileSync(join(taskDir, 'Dockerfile'), 'FROM stepbox-sandbox:2\nUSER root\nCOPY . /ctx/\n');
    symlinkSync(hostSecret, join(taskDir, 'secret'));
    writeFileSync(
      join(taskDir, 'task.json'),
      JSON.stringify({ name: 'link-out', goal: 'x', sandbox: { build: '.' } }),
    );
    const agent = script(taskDir, 'agent.jsonl', [
      call('execute_shell', { command: 'ls -A /ctx; cat /ctx/secret; echo listed' }),
      { content: 'done' },
    ]);
    const refused = await cli(['run', taskDir, '--agent', `scripted:${agent}`]);
    noteTags(refused.stderr);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      `secret in the build context is a symbolic link to ${hostSecret}, outside ${taskDir}`,
    );
    expect(refused.stderr).toContain(`a line secret in ${join(taskDir, '.dockerignore')}`);
    expect(refused.stderr).not.toContain('[build]'); // refused at load: nothing went to the engine
    writeFileSync(join(taskDir, '.dockerignore'), 'secret\n');
    const run = await cli(['run', taskDir, '--agent', `scripted:${agent}`, '--json']);
    noteTags(run.stderr);
    expect(run.stderr).toMatch(/\[build\] building stepbox-build:/);
    const trace = traceText(JSON.parse(run.stdout) as { trace: string });
    expect(trace).toContain('listed');
    expect(trace).toContain('Dockerfile'); // the rest of the context is in the image
    expect(trace).not.toContain(`HOST-SECRET-${token}`);
    expect(trace).toMatch(/cat: (can't open ')?\/ctx\/secret/); // not sent at all
  });

  it(".dockerignore's rules hold in nested folders: the engine gets exactly what docker build sends, and nothing a rule leaves out reaches the image", async () => {
    const ctx = join(dir, 'nested-ignore');
    const long = `${'d'.repeat(120)}/${'e'.repeat(110)}.txt`;
    const files: Record<string, string> = {
      'secret/key': `SECRET-${token}`,
      'sub/dir/k.pem': `PEM-${token}`,
      'sub/dir/file': `FILE-${token}`,
      'sub/keep': `keep-${token}`,
      'kept/inner/secret.txt': `INNER-${token}`,
      'kept/inner/back.txt': 'back',
      [long]: 'long',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(ctx, path, '..'), { recursive: true });
      writeFileSync(join(ctx, path), text);
    }
    symlinkSync('keep', join(ctx, 'sub/link'));
    writeFileSync(
      join(ctx, '.dockerignore'),
      'secret/**\n**/*.pem\nsub/dir/file\nkept/inner\n!kept/inner/back.txt\n',
    );
    writeFileSync(
      join(ctx, 'Dockerfile'),
      `FROM stepbox-sandbox:2\nUSER root\nCOPY . /ctx/\nRUN cd /ctx && find . -mindepth 1 | sort | sed "s/^/sent: /" && test "$(cat sub/link kept/inner/back.txt)" = keep-${token}back && ! grep -r --exclude=Dockerfile -e SECRET- -e PEM- -e FILE- -e INNER- /ctx\n`,
    );
    const provider = await testProvider();
    try {
      const lines: string[] = [];
      const spec = { context: ctx, dockerfile: join(ctx, 'Dockerfile') };
      const first = await ensureBuilt(provider.engine.docker, spec, (p) => lines.push(p.line));
      built.add(first.image);
      const sent = lines.flatMap((l) => /^\[build\] sent: \.\/(.*)$/.exec(l)?.[1] ?? []);
      // What `DOCKER_BUILDKIT=0 docker build` COPYs of this context (the classic builder's).
      expect(sent).toEqual([
        '.dockerignore',
        'Dockerfile',
        'd'.repeat(120),
        long,
        'kept',
        'kept/inner',
        'kept/inner/back.txt',
        'secret',
        'sub',
        'sub/dir',
        'sub/keep',
        'sub/link',
      ]);
      // A file a rule leaves out changes nothing the build sees: no second build.
      writeFileSync(join(ctx, 'secret/key'), 'rotated');
      const again = await ensureBuilt(provider.engine.docker, spec, () => undefined);
      expect(again).toMatchObject({ image: first.image, cached: true });
    } finally {
      expect(await closeTestProvider(provider)).toEqual([]);
    }
  });

  it('a Dockerfile that fails to build: its last lines in the error, exit 2, nothing recorded', async () => {
    const taskDir = join(dir, 'bad-build');
    mkdirSync(taskDir, { recursive: true });
    writeFileSync(
      join(taskDir, 'Dockerfile'),
      `FROM stepbox-sandbox:2\nRUN echo about-to-fail-${token} && exit 7\n`,
    );
    writeFileSync(
      join(taskDir, 'task.json'),
      JSON.stringify({ name: 'bad', goal: 'x', sandbox: { build: '.' } }),
    );
    const agent = script(taskDir, 'agent.jsonl', [{ content: 'done' }]);
    const run = await cli(['run', taskDir, '--agent', `scripted:${agent}`]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/building .*Dockerfile failed/);
    expect(run.stderr).toContain('its last lines:');
    expect(run.stderr).toContain(`about-to-fail-${token}`);
    expect(run.stderr).toMatch(/returned a non-zero code: 7/);
    expect(run.stderr).not.toMatch(/\n\s+at .*\(.*\.js:\d+/); // no stack trace
  });
});
