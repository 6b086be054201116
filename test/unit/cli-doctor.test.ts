import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diskUse } from '../../electron/engine/doctor.js';
import { stepboxHome } from '../../electron/engine/trace/episode-store.js';
import { dockerFix } from '../../electron/engine/docker/ping.js';
import { formatBytes } from '../../shared/format-bytes.js';

describe('doctor helpers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-du-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sums file sizes under the store, recursing and not following symlinks', async () => {
    mkdirSync(join(dir, 'a', 'b'), { recursive: true });
    writeFileSync(join(dir, 'a', 'x'), Buffer.alloc(1000));
    writeFileSync(join(dir, 'a', 'b', 'y'), Buffer.alloc(234));
    symlinkSync('/usr', join(dir, 'link'));
    const linkSize = '/usr'.length;
    expect(await diskUse(dir)).toBe(1234 + linkSize);
    expect(await diskUse(join(dir, 'missing'))).toBe(0);
  });

  it('finds the store in STEPBOX_HOME, else ~/.stepbox', () => {
    expect(stepboxHome({ STEPBOX_HOME: '/data/sb' })).toBe('/data/sb');
    expect(stepboxHome({})).toBe(join(homedir(), '.stepbox'));
  });

  it('formats bytes for people in binary units, as the store commands and the inspector do', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(12_345_678)).toBe('11.8 MiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.00 GiB');
  });

  it('names a fix that fits the endpoint and the error', () => {
    expect(dockerFix({ DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toMatch(
      /DOCKER_HOST=tcp:\/\/10.0.0.5:2375.*unset DOCKER_HOST/,
    );
    expect(dockerFix({ DOCKER_HOST: 'unix:///run/d.sock' })).toMatch(/listens on unix:\/\/\/run\/d.sock/);
    expect(dockerFix({}, 'EACCES')).toMatch(/usermod -aG docker/);
    expect(dockerFix({})).toMatch(/DOCKER_HOST=tcp:\/\/HOST:2375/);
  });
});
