import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { ensurePulled, PullError, type PullProgress } from '../../electron/engine/docker/pull-image.js';
import { runCli } from '../support/cli.js';
import { pullLines, startFakeDockerEngine, type FakeDockerEngine } from '../support/fake-docker-engine.js';

const IMAGE = 'registry.example/team/app:1';
const OFFLINE =
  'Get "https://registry.example/v2/": dial tcp: lookup registry.example on 127.0.0.53:53: no such host';

let engine: FakeDockerEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

async function pullWith(answer: Parameters<typeof startFakeDockerEngine>[0]) {
  engine = await startFakeDockerEngine(answer);
  const docker = new Docker({ socketPath: engine.socketPath });
  const events: PullProgress[] = [];
  const pulls = () => engine!.requests.filter((r) => r.method === 'POST' && r.url.includes('/images/create'));
  return { docker, events, progress: (p: PullProgress) => events.push(p), pulls };
}

describe('pulling an image the engine lacks, with progress', () => {
  it('pulls through the engine API: a start, a line per layer change and tenth of its bytes, then pulled', async () => {
    const { docker, events, progress, pulls } = await pullWith(() => ({ lines: pullLines('1') }));
    const r = await ensurePulled(docker, IMAGE, progress);
    expect(r.pulled).toBe(true);
    expect(pulls()).toHaveLength(1);
    expect(pulls()[0].url).toContain('fromImage=registry.example%2Fteam%2Fapp');
    expect(events.every((e) => e.kind === 'pull' && e.image === IMAGE)).toBe(true);
    expect(events.every((e) => e.line.startsWith(`[pull] ${IMAGE}: `))).toBe(true);
    expect(events[0]).toMatchObject({
      phase: 'start',
      line: `[pull] ${IMAGE}: not in the engine, pulling it`,
    });
    expect(events.at(-1)).toMatchObject({ phase: 'pulled' });
    expect(events.at(-1)!.line).toMatch(/pulled in \d+ ms \(2\/2 layers, 10\.0 MiB of 10\.0 MiB\)$/);
    const lines = events
      .filter((e) => e.phase === 'step')
      .map((e) => e.line.slice(`[pull] ${IMAGE}: `.length));
    expect(lines).toContain(
      'layer a1b2c3d4e5f6 Downloading 1.0 MiB/8.0 MiB (0/2 layers, 1.0 MiB of 8.0 MiB)',
    );
    expect(lines).toContain(
      'layer a1b2c3d4e5f6 Downloading 4.0 MiB/8.0 MiB (0/2 layers, 4.0 MiB of 8.0 MiB)',
    );
    expect(lines).toContain(
      'layer 0f9e8d7c6b5a Downloading 1.0 MiB/2.0 MiB (0/2 layers, 5.0 MiB of 10.0 MiB)',
    );
    expect(lines).toContain('layer 0f9e8d7c6b5a Pull complete (2/2 layers, 10.0 MiB of 10.0 MiB)');
    // 1.1 MiB of 8 is the same tenth as 1.0 MiB: no line of its own.
    expect(lines.some((l) => l.includes('1.1 MiB/8.0 MiB'))).toBe(false);
    expect(lines).toContain('Pulling from team/app');
  });

  it('an image the engine has, or one stepbox builds itself, is never pulled and says nothing', async () => {
    const { docker, events, progress, pulls } = await pullWith(() => ({ lines: pullLines('1') }));
    engine!.images.add(IMAGE);
    expect((await ensurePulled(docker, IMAGE, progress)).pulled).toBe(false);
    expect((await ensurePulled(docker, SANDBOX_IMAGE, progress)).pulled).toBe(false);
    expect((await ensurePulled(docker, 'stepbox-build:0123abcd', progress)).pulled).toBe(false);
    expect(pulls()).toHaveLength(0);
    expect(events).toEqual([]);
  });

  it('no registry reachable: an error naming the image, saying so, and the fix (docker load, a build)', async () => {
    const { docker, events, progress } = await pullWith(() => ({
      lines: [
        { status: 'Pulling from team/app', id: '1' },
        { errorDetail: { message: OFFLINE }, error: OFFLINE },
      ],
    }));
    const e = await ensurePulled(docker, IMAGE, progress).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PullError);
    expect(e).toMatchObject({
      code: 'image_missing',
      message: expect.stringContaining(
        `the image ${IMAGE} is not in the Docker engine, and the engine cannot pull it: no image registry is reachable`,
      ),
      fix: expect.stringContaining('docker load -i image.tar'),
    });
    expect((e as PullError).fix).toContain('sandbox.build');
    expect(events[0].phase).toBe('start');
    // The same when the engine refuses the pull at once (an HTTP error, not in the stream).
    await engine!.close();
    const again = await pullWith(() => ({ status: 500, message: OFFLINE }));
    await expect(ensurePulled(again.docker, IMAGE, again.progress)).rejects.toMatchObject({
      code: 'image_missing',
      message: expect.stringContaining('no image registry is reachable'),
    });
  });

  it('a registry without that image: the error says so and to check the name', async () => {
    const denied =
      "pull access denied for registry.example/team/app, repository does not exist or may require 'docker login'";
    const { docker, progress } = await pullWith(() => ({ status: 404, message: denied }));
    await expect(ensurePulled(docker, IMAGE, progress)).rejects.toMatchObject({
      code: 'image_missing',
      message: expect.stringContaining('its registry has no such image for us'),
      fix: expect.stringContaining('fix the name (sandbox.image)'),
    });
  });
});

// Each runs the CLI (a child process): seconds, more on a loaded machine.
describe('stepbox run: a pull shows as [pull] lines on stderr', { timeout: 90_000 }, () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function runTask(answer: Parameters<typeof startFakeDockerEngine>[0]) {
    engine = await startFakeDockerEngine(answer);
    dir = mkdtempSync(join(tmpdir(), 'stepbox-pull-cli-'));
    const task = join(dir, 'task.json');
    writeFileSync(task, JSON.stringify({ name: 'pull', goal: 'g', sandbox: { image: IMAGE } }));
    writeFileSync(join(dir, 'agent.jsonl'), JSON.stringify({ content: 'done' }) + '\n');
    return runCli(['run', task, '--agent', `scripted:${join(dir, 'agent.jsonl')}`, '--json'], {
      env: {
        DOCKER_HOST: `unix://${engine.socketPath}`,
        STEPBOX_HOME: join(dir, 'home'),
        STEPBOX_POOL_SIZE: '0',
      },
      timeoutMs: 60_000,
    });
  }

  it('the pull progress, then the pulled line, before the sandbox starts', async () => {
    const r = await runTask(() => ({ lines: pullLines('1') }));
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('[pull] '));
    expect(lines[0]).toBe(`[pull] ${IMAGE}: not in the engine, pulling it`);
    expect(lines).toContain(
      `[pull] ${IMAGE}: layer a1b2c3d4e5f6 Downloading 4.0 MiB/8.0 MiB (0/2 layers, 4.0 MiB of 8.0 MiB)`,
    );
    expect(lines.at(-1)).toMatch(new RegExp(`^\\[pull\\] ${IMAGE.replace(/\./g, '\\.')}: pulled in \\d+ ms`));
  });

  it('a pull that cannot reach a registry: the clear error and exit 3, no stack trace', async () => {
    const r = await runTask(() => ({ status: 500, message: OFFLINE }));
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`[pull] ${IMAGE}: not in the engine, pulling it`);
    expect(r.stderr).toContain(
      `the image ${IMAGE} is not in the Docker engine, and the engine cannot pull it: no image registry is reachable`,
    );
    expect(r.stderr).toContain('docker load -i image.tar');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
