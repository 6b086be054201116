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
    const stats = await openStats(container.id, docker);
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

  it('ends when the container goes away', async () => {
    const doomed = await startPlainContainer('docker-stats-end');
    const stats = await openStats(doomed.id, docker);
    const ended = new Promise<string>((resolve) => stats.onEnd(resolve));
    await doomed.remove({ force: true });
    expect(await ended).toMatch(/stopped|closed|failed/);
  });
});
