import { describe, expect, it } from 'vitest';
import { toSample } from '../../electron/engine/docker/stats.js';

describe('stats sample', () => {
  it('computes CPU percent like docker stats and leaves page cache out of memory (cgroup v1)', () => {
    const s = toSample(
      {
        read: '2026-01-01T00:00:01Z',
        cpu_stats: {
          cpu_usage: { total_usage: 3_000_000, percpu_usage: [1, 2] },
          system_cpu_usage: 20_000_000,
        },
        precpu_stats: { cpu_usage: { total_usage: 1_000_000 }, system_cpu_usage: 10_000_000 },
        memory_stats: { usage: 50_000_000, limit: 1 << 30, stats: { total_inactive_file: 10_000_000 } },
        pids_stats: { current: 7 },
      },
      1 << 30,
    );
    expect(s).toEqual({
      cpuPercent: 40,
      memoryBytes: 40_000_000,
      memoryLimit: 1 << 30,
      pids: 7,
      t: Date.parse('2026-01-01T00:00:01Z'),
    });
  });

  it('reads cgroup v2 page cache and reports 0 CPU for the first sample', () => {
    const s = toSample(
      {
        read: '0001-01-01T00:00:00Z',
        cpu_stats: { cpu_usage: { total_usage: 5 }, system_cpu_usage: 10, online_cpus: 2 },
        memory_stats: { usage: 300, limit: 1000, stats: { inactive_file: 100 } },
      },
      1000,
      42,
    );
    expect(s).toMatchObject({ cpuPercent: 0, memoryBytes: 200, pids: 0, t: 42 });
  });

  it("leaves the files in tmpfs mounts out of the processes' memory (they are disk)", () => {
    // cgroup v2: shmem is the tmpfs pages, charged to the cgroup but not the processes'.
    const v2 = toSample(
      {
        memory_stats: { usage: 300, limit: 1000, stats: { inactive_file: 100, shmem: 150 } },
      },
      500,
    );
    expect(v2.memoryBytes).toBe(50);
    // cgroup v1 as Docker passes it (no shmem figure): the processes' anonymous memory.
    const v1 = toSample(
      {
        memory_stats: {
          usage: 52_883_456,
          limit: 1 << 29,
          stats: { total_cache: 52_428_800, total_inactive_file: 0, total_rss: 53_248 },
        },
      } as Parameters<typeof toSample>[0],
      256 << 20,
    );
    // The swap-backed part of the cache (the tmpfs file) is left out: what stays is the processes' own.
    expect(v1.memoryBytes).toBeLessThan(1 << 20);
  });

  it('shows memory a command holds in shared memory or a memfd: only what the tmpfs mounts can hold counts as files', () => {
    const MiB = 1 << 20;
    // A 512 MiB task with 100 MiB of tmpfs; its command maps 300 MiB of shared anonymous memory
    // beside a 50 MiB file in a tmpfs (a real cgroup v1 reading): 3 MiB was shown.
    const mapped = toSample(
      {
        memory_stats: {
          usage: 369_311_744,
          limit: 612 * MiB,
          stats: {
            total_cache: 364_576_768,
            total_inactive_file: 110_592,
            total_mapped_file: 314_572_800,
            total_rss: 2_818_048,
          },
        },
      },
      512 * MiB,
    );
    expect(mapped.memoryBytes).toBeGreaterThanOrEqual(300 * MiB);
    // cgroup v2 in a 612 MiB cgroup of a 512 MiB task: the processes' memory of a reading.
    const v2 = (usage: number, shmem: number, anon: number, mapped: number) =>
      toSample(
        {
          memory_stats: {
            usage,
            limit: 612 * MiB,
            stats: { inactive_file: 0, shmem, anon, file_mapped: mapped },
          },
        },
        512 * MiB,
      ).memoryBytes;
    // 350 MiB written to a memfd (never mapped) and 40 MiB of tmpfs files, all shmem.
    expect(v2(400 * MiB, 390 * MiB, 5 * MiB, 2 * MiB)).toBe(300 * MiB);
    // A full workspace and an idle command stay as they were: the files are disk.
    expect(v2(101 * MiB, 100 * MiB, MiB, 0)).toBe(MiB);
  });
});
