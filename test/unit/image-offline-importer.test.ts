import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingTool, sandboxResourcesDir } from '../../electron/engine/docker/image.js';

const script = join(sandboxResourcesDir(), 'build-offline.sh');

/** A PATH holding only bash, tar and a stub debootstrap: no docker, no podman client. */
const bin = mkdtempSync(join(tmpdir(), 'stepbox-offline-path-'));
for (const tool of ['bash', 'tar', 'id', 'mktemp', 'rm']) symlinkSync(`/bin/${tool}`, join(bin, tool));
writeFileSync(join(bin, 'debootstrap'), '#!/bin/bash\nexit 99\n');
chmodSync(join(bin, 'debootstrap'), 0o755);
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function runBuilder(engine: string) {
  return spawnSync('/bin/bash', [script, 'stepbox-test-never:0', '0'], {
    env: { PATH: bin, STEPBOX_ENGINE: engine },
    encoding: 'utf8',
  });
}

describe('the offline image builder and its importer', () => {
  it('with Podman as the engine and no client, exits 3 naming podman and its package', () => {
    const r = runBuilder('podman');
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/podman/);
    const e = missingTool(r.stderr.trim().split('\n').pop() ?? '');
    expect(e.code).toBe('tool_missing');
    expect(e.fix).toBe('sudo apt-get install -y podman');
  });

  it('with Docker and no client, names docker.io and Podman as the other way', () => {
    const r = runBuilder('docker');
    expect(r.status).toBe(3);
    expect(missingTool(r.stderr.trim()).fix).toBe('sudo apt-get install -y docker.io');
    expect(r.stderr).toMatch(/podman/);
  });

  it('sets the environment one variable per ENV (Podman takes `ENV A=1 B=2` as one variable)', () => {
    const text = readFileSync(script, 'utf8');
    const envs = [...text.matchAll(/--change '(ENV [^']*)'/g)].map((m) => m[1]);
    expect(envs.length).toBeGreaterThanOrEqual(4);
    for (const env of envs) expect(env, env).toMatch(/^ENV [A-Z_]+=\S+$/);
    expect(text).toMatch(/import\+=\(--url "\$DOCKER_HOST"\)/);
  });

  it('takes the exact command from a `run:` line (rootless Podman: keep DOCKER_HOST under sudo)', () => {
    const e = missingTool(
      'stepbox: the offline builder needs root (debootstrap); keep DOCKER_HOST so …; run: sudo --preserve-env=DOCKER_HOST npx stepbox image build --offline',
    );
    expect(e.fix).toBe('sudo --preserve-env=DOCKER_HOST npx stepbox image build --offline');
    expect(missingTool('stepbox: the offline builder needs root (debootstrap); run it with sudo').fix).toBe(
      'sudo npx stepbox image build',
    );
  });
});
