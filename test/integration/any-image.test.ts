import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { OomEvents } from '../../electron/engine/docker/oom.js';
import { ownerLabel } from '../../electron/engine/docker/owner.js';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import { SELFTEST_CHECKS } from '../../electron/engine/sandbox/selftest.js';
import { runCli, PROJECT_ROOT } from '../support/cli.js';
import { describeDocker, useTestProvider } from '../support/docker.js';
import { tempHome } from '../support/harness.js';
import { CONFORMANCE_CONFIG, sandboxConformance } from '../support/sandbox-conformance.js';

// Images with nothing of stepbox's (test/support/build-world-images.sh, which CI runs; run
// here too, it keeps images already built): a busybox-only one (no /etc/passwd, no loader,
// no libc) and the stepbox image without python3 and bash (dash as /bin/sh).
const BUSYBOX = 'stepbox-test-busybox:1';
const NO_PYTHON = 'stepbox-test-nopython:1';
const ARM64 = 'stepbox-test-arm64:1';

function buildImages(): void {
  execFileSync('bash', [join(PROJECT_ROOT, 'test/support/build-world-images.sh'), SANDBOX_IMAGE], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 300_000,
  });
}

/** One tool call of the scripted agent (OpenAI chat format, one JSONL line). */
const shell = (command: string, id: string) =>
  JSON.stringify({
    tool_calls: [
      { id, type: 'function', function: { name: 'execute_shell', arguments: JSON.stringify({ command }) } },
    ],
  });

describeDocker('any image: an image without python3, bash or user 1000', () => {
  let env: ReturnType<typeof tempHome>;
  let dir: string;
  beforeAll(() => {
    buildImages();
    env = tempHome();
    dir = mkdtempSync(join(tmpdir(), 'stepbox-any-image-'));
  }, 300_000);
  afterAll(() => {
    env?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const cli = (args: string[], input?: string) =>
    runCli(args, {
      env: { STEPBOX_HOME: env.home },
      timeoutMs: 180_000,
      ...(input === undefined ? {} : { input }),
    });

  for (const image of [BUSYBOX, NO_PYTHON]) {
    it(`${image}: stepbox sandbox selftest --image holds every check`, async () => {
      const r = await cli(['sandbox', 'selftest', '--image', image, '--json']);
      const report = JSON.parse(r.stdout) as {
        ok: boolean;
        checks: { id: string; ok: boolean; detail: string }[];
      };
      expect(report.checks.map((c) => c.id)).toEqual([...SELFTEST_CHECKS]);
      for (const c of report.checks) expect(c, `${c.id}: ${c.detail}`).toMatchObject({ ok: true });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }, 240_000);

    it(`${image}: an episode steps, rolls back and forks, in the image's own programs`, async () => {
      const name = image.replace(/\W+/g, '-');
      const task = join(dir, `${name}.json`);
      // The verifier fails unless the rollback and the fork restored the workspace (a.txt
      // would hold a line twice, d/f would be back) and unless the image really has neither
      // python3 nor bash: the session's bash is stepbox's, the programs are the image's.
      writeFileSync(
        task,
        JSON.stringify({
          name,
          goal: 'write one, two and three to a.txt',
          sandbox: { image },
          workspace: { files: { 'keep.txt': 'kept\n' } },
          max_steps: 10,
          verifier: {
            command:
              'test "$(cat a.txt)" = "$(printf \'one\\ntwo\\nthree\')" && test ! -e d/f && ! command -v python3 && ! command -v bash && test "$(id -u)" = 1000',
            timeout: 30,
          },
        }),
      );
      const script = join(dir, `${name}.jsonl`);
      writeFileSync(
        script,
        [
          shell('echo one > a.txt && mkdir -p d && echo x > d/f && ls', 'c1'),
          shell('echo two >> a.txt && rm d/f', 'c2'),
          shell('echo three >> a.txt', 'c3'),
          JSON.stringify({ content: 'done' }),
        ].join('\n') + '\n',
      );
      // Three steps, back to step 1, then on: steps 2 and 3 again on a new branch.
      const run = await cli(
        ['run', task, '--agent', `scripted:${script}`, '--step', '--json'],
        '\n\n\nr 1\nc\n',
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain('rolled back to step 1');
      const summary = JSON.parse(run.stdout) as { episode: string; branch: string; status: string };
      expect(summary).toMatchObject({ status: 'succeeded' });
      expect(summary.branch).not.toBe(summary.episode);

      // A fork at 2 starts from snapshot 2 (one, two; d empty) restored into a new sandbox.
      const forkScript = join(dir, `${name}-fork.jsonl`);
      writeFileSync(
        forkScript,
        [
          shell('test -d d && test ! -e d/f && echo three >> a.txt', 'f1'),
          JSON.stringify({ content: 'done' }),
        ].join('\n') + '\n',
      );
      const fork = await cli([
        'fork',
        summary.episode,
        '--at',
        '2',
        '--agent',
        `scripted:${forkScript}`,
        '--allow-image',
        '--json',
      ]);
      expect(fork.code, fork.stderr).toBe(0);
      expect(JSON.parse(fork.stdout)).toMatchObject({
        status: 'succeeded',
        parent: summary.episode,
        fork_step: 2,
        verifier: { success: true },
      });
    }, 300_000);
  }

  it('refuses an image of another platform with what is wrong and the fix', async () => {
    // An image that says it is linux/arm64 (`docker load` of a hand-made archive: `docker
    // import --platform` is ignored by older engines): refused before any container starts.
    const saved = mkdtempSync(join(tmpdir(), 'stepbox-arm64-'));
    try {
      mkdirSync(join(saved, 'root'));
      writeFileSync(join(saved, 'root', 'hello'), 'hi\n');
      execFileSync('tar', ['-C', join(saved, 'root'), '-cf', join(saved, 'layer.tar'), '.']);
      const diff = createHash('sha256')
        .update(readFileSync(join(saved, 'layer.tar')))
        .digest('hex');
      writeFileSync(
        join(saved, 'config.json'),
        JSON.stringify({
          architecture: 'arm64',
          os: 'linux',
          config: {},
          rootfs: { type: 'layers', diff_ids: [`sha256:${diff}`] },
        }),
      );
      writeFileSync(
        join(saved, 'manifest.json'),
        JSON.stringify([{ Config: 'config.json', RepoTags: [ARM64], Layers: ['layer.tar'] }]),
      );
      execFileSync(
        'sh',
        ['-c', `tar -C '${saved}' -cf - manifest.json config.json layer.tar | docker load`],
        {
          stdio: 'ignore',
        },
      );
    } finally {
      rmSync(saved, { recursive: true, force: true });
    }
    try {
      const r = await cli(['sandbox', 'selftest', '--image', ARM64]);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/built for linux\/arm64; a sandbox needs a linux\/amd64 image/);
      expect(r.stderr).toMatch(/docker pull --platform linux\/amd64/);
      expect(r.stderr).not.toMatch(/frame announced/);
    } finally {
      execFileSync('docker', ['rmi', '-f', ARM64], { stdio: 'ignore' });
    }
  }, 120_000);
});

describeDocker('any image: an exec the engine cannot start', () => {
  it("is said in the engine's words and with the fix, not as a misread frame length", async () => {
    // A container without stepbox's runtime: the helper's exec cannot start its loader.
    const engine = new DockerEngine();
    const config = defaultSandboxConfig();
    const id = await engine.createAndStart(containerSpec(config, ownerLabel()));
    const sb = new DockerSandbox(engine, id, config, { ooms: new OomEvents(), onDestroy: () => undefined });
    try {
      const e = (await sb.start().catch((x: unknown) => x)) as SandboxFailure;
      expect(e).toBeInstanceOf(SandboxFailure);
      expect(e.message).toMatch(/its output is text, not the protocol: "OCI runtime exec failed/);
      expect(e.message).toContain('the engine could not start /opt/stepbox/runtime/lib/ld.so');
      expect(e.message).not.toMatch(/announced/);
      expect(e.fix).toMatch(/docker volume rm stepbox-runtime-/);
    } finally {
      await sb.destroy();
    }
  }, 60_000);
});

describeDocker('any image: an ENTRYPOINT that does not run its arguments', () => {
  beforeAll(buildImages, 300_000);
  it('is named as the reason the sandbox stopped, with the fix', async () => {
    const image = 'stepbox-test-entrypoint:1';
    execFileSync(
      'sh',
      [
        '-c',
        `id=$(docker create ${BUSYBOX} true) && docker export "$id" | docker import --change 'ENTRYPOINT ["/bin/false"]' - ${image} && docker rm "$id"`,
      ],
      { stdio: 'ignore' },
    );
    try {
      const r = await runCli(['sandbox', 'selftest', '--image', image], { timeoutMs: 120_000 });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/stopped before its helper started \(its main command exited with 1\)/);
      expect(r.stderr).toMatch(/ENTRYPOINT/);
      expect(r.stderr).not.toMatch(/kill -9 -1/);
    } finally {
      execFileSync('docker', ['rmi', '-f', image], { stdio: 'ignore' });
    }
  }, 180_000);
});

// The one conformance suite of every backend, on the busybox-only image.
describeDocker('any image: conformance on the busybox-only image', () => {
  beforeAll(buildImages, 300_000);
  const provider = useTestProvider();
  const storeRoot = mkdtempSync(join(tmpdir(), 'stepbox-conformance-busybox-'));
  let stores = 0;
  afterAll(() => rmSync(storeRoot, { recursive: true, force: true }));
  sandboxConformance(
    'docker, busybox-only image',
    () => provider(),
    () => new DiskSnapshotStore(join(storeRoot, String(stores++))),
    { config: { ...CONFORMANCE_CONFIG, image: BUSYBOX } },
  );
});
