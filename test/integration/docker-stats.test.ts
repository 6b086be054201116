import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStats, type StatsSample } from '../../electron/engine/docker/stats.js';
import { docker, startPlainContainer, waitUntil } from '../support/cli-docker.js';

describe('container stats stream', () => {
  let container: Docker.Container;
  beforeAll(async () => {
    container = await startPlainContainer('docker-stats');
  });
  afterAll(async () => {
    await container?.remove({ force: true });
  });

  it('emits samples of a running container until closed', async () => {
    const stats = await openStats(container.id, docker, 128 * 1024 ** 2);
    const samples: StatsSample[] = [];
    stats.onSample((s) => samples.push(s));
    const ended = new Promise<string>((resolve) => stats.onEnd(resolve));
    await waitUntil(
      () => samples.length >= 2,
      (tick) => stats.onSample(tick),
      'two stats samples',
      15_000,
    );
    stats.close();
    const last = samples[samples.length - 1];
    expect(last.memoryLimit).toBe(256 * 1024 ** 2);
    expect(last.memoryBytes).toBeGreaterThan(0);
    expect(last.pids).toBeGreaterThanOrEqual(2); // init + sleep
    expect(last.cpuPercent).toBeGreaterThanOrEqual(0);
    expect(await ended).toBe('closed');
  });

  it('counts memory a command holds in a shared mapping (the kernel files it with tmpfs pages, as shmem)', async () => {
    const MiB = 1024 ** 2;
    // The cgroup holds 256 MiB; a task of 128 MiB leaves 128 MiB that tmpfs files could take.
    const stats = await openStats(container.id, docker, 128 * MiB);
    const exec = await container.exec({
      Cmd: [
        'python3',
        '-c',
        'import mmap,time\nm=mmap.mmap(-1,150<<20,flags=mmap.MAP_SHARED|mmap.MAP_ANONYMOUS)\nfor i in range(0,150<<20,4096): m[i]=1\nprint("held",flush=True)\ntime.sleep(60)',
      ],
      AttachStdout: true,
    });
    const out = (await exec.start({})) as unknown as NodeJS.ReadableStream;
    await new Promise<void>((resolve) => out.on('data', (d: Buffer) => d.includes('held') && resolve()));
    let last = 0;
    try {
      await waitUntil(
        () => last >= 150 * MiB,
        (tick) =>
          stats.onSample((s) => {
            last = s.memoryBytes;
            tick();
          }),
        'a sample showing the 150 MiB held',
        15_000,
      );
    } finally {
      stats.close();
    }
    expect(last).toBeGreaterThanOrEqual(150 * MiB);
  });

  it('ends when the container goes away', async () => {
    const doomed = await startPlainContainer('docker-stats-end');
    const stats = await openStats(doomed.id, docker, 128 * 1024 ** 2);
    const ended = new Promise<string>((resolve) => stats.onEnd(resolve));
    await doomed.remove({ force: true });
    expect(await ended).toMatch(/stopped|closed|failed/);
  });
});
