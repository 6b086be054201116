import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { logger } from '../log.js';

const log = logger('stats');

/** One resource sample of a container (the engine sends one about every second). */
export interface StatsSample {
  /** CPU use since the previous sample, in percent of one core (200 = two cores busy). */
  readonly cpuPercent: number;
  /**
   * Memory the container's processes use: page cache and tmpfs files left out. `docker stats`
   * counts the files in /workspace, /tmp and $HOME too (tmpfs pages are charged to the
   * memory cgroup), which made an idle sandbox with a full workspace look out of memory.
   */
  readonly memoryBytes: number;
  /**
   * The memory cgroup's limit: the task's memory plus the tmpfs sizes (container-spec.ts's
   * `containerMemoryBytes`), not the limit a task names.
   */
  readonly memoryLimit: number;
  readonly pids: number;
  /** Epoch ms of the sample. */
  readonly t: number;
}

/** A live stats stream of one container. Listener registrations return an unsubscribe. */
export interface StatsStream {
  onSample(cb: (sample: StatsSample) => void): () => void;
  /** The stream ended (container gone, closed, or Docker unreachable). */
  onEnd(cb: (reason: string) => void): () => void;
  close(): void;
}

/** The subset of the engine's stats document this module reads (cgroup v1 and v2). */
interface RawStats {
  read?: string;
  cpu_stats?: {
    cpu_usage?: { total_usage?: number; percpu_usage?: number[] };
    system_cpu_usage?: number;
    online_cpus?: number;
  };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
  memory_stats?: {
    usage?: number;
    limit?: number;
    stats?: {
      cache?: number;
      total_inactive_file?: number;
      inactive_file?: number;
      /** tmpfs pages: `shmem` under cgroup v2, `total_shmem` under v1 where the engine passes it. */
      shmem?: number;
      total_shmem?: number;
      /** cgroup v1's anonymous memory of the processes. */
      total_rss?: number;
      /** cgroup v1's page cache (files and swap-backed pages: tmpfs, shared anonymous memory). */
      total_cache?: number;
      total_active_file?: number;
      /** Pages mapped into a process (v1, v2): shared memory a process holds is among them. */
      total_mapped_file?: number;
      file_mapped?: number;
      /** cgroup v2's anonymous memory of the processes (shared anonymous memory is shmem). */
      anon?: number;
    };
  };
  pids_stats?: { current?: number };
}

/**
 * Turns one engine stats document into a sample: CPU the way `docker stats` computes it, memory
 * the processes' own. `taskMemoryBytes` is the task's limit: the cgroup's is larger by the tmpfs
 * sizes (container-spec.ts), which bounds how much of the swap-backed memory can be files.
 */
export function toSample(raw: RawStats, taskMemoryBytes: number, now = Date.now()): StatsSample {
  const cpu = raw.cpu_stats?.cpu_usage?.total_usage ?? 0;
  const preCpu = raw.precpu_stats?.cpu_usage?.total_usage ?? 0;
  const system = raw.cpu_stats?.system_cpu_usage ?? 0;
  const preSystem = raw.precpu_stats?.system_cpu_usage ?? 0;
  // Older engines leave online_cpus out; the per-CPU list has one entry per CPU then.
  const cpus = raw.cpu_stats?.online_cpus ?? raw.cpu_stats?.cpu_usage?.percpu_usage?.length ?? 1;
  const cpuDelta = cpu - preCpu;
  const systemDelta = system - preSystem;
  // The first document has no previous reading (precpu zero): no interval, no percentage.
  const cpuPercent =
    preSystem > 0 && cpuDelta > 0 && systemDelta > 0 ? (cpuDelta / systemDelta) * cpus * 100 : 0;
  const mem = raw.memory_stats ?? {};
  const t = raw.read ? Date.parse(raw.read) : NaN;
  return {
    cpuPercent,
    memoryBytes: processMemory(mem, Math.max(0, (mem.limit ?? 0) - taskMemoryBytes)),
    memoryLimit: mem.limit ?? 0,
    pids: raw.pids_stats?.current ?? 0,
    t: Number.isFinite(t) && t > 0 ? t : now,
  };
}

/**
 * The processes' memory of a stats document: usage less reclaimable page cache and less the
 * tmpfs files, which are disk (a full /workspace is no memory pressure). The kernel counts
 * tmpfs files and a process's shared memory alike (shmem; cgroup v1 passes no figure, so the
 * swap-backed part of its cache stands for it): only as much as the tmpfs mounts can hold
 * (`tmpfsBytes`) is left out, and never the pages mapped into a process. Leaving all of shmem
 * out let a command hide its memory from the pane: 300 MB held in a shared mapping or a memfd
 * read as 3 MB of a 512 MB limit until the kernel killed it.
 */
function processMemory(mem: NonNullable<RawStats['memory_stats']>, tmpfsBytes: number): number {
  const stats = mem.stats ?? {};
  // cgroup v1 reports page cache as total_inactive_file/cache, v2 as inactive_file.
  const inactive = stats.total_inactive_file ?? stats.inactive_file ?? 0;
  const usage = mem.usage ?? 0;
  const shmem =
    stats.shmem ??
    stats.total_shmem ??
    Math.max(0, (stats.total_cache ?? stats.cache ?? 0) - inactive - (stats.total_active_file ?? 0));
  const held = (stats.anon ?? stats.total_rss ?? 0) + (stats.file_mapped ?? stats.total_mapped_file ?? 0);
  return Math.max(0, held, usage - inactive - Math.min(shmem, tmpfsBytes));
}

/**
 * Opens one long-lived stats stream (`container.stats({stream: true})`) and emits a sample
 * per engine update until `close()` or the container goes away (`taskMemoryBytes`: see {@link toSample}).
 */
export async function openStats(
  containerId: string,
  docker: Docker,
  taskMemoryBytes: number,
): Promise<StatsStream> {
  const stream = (await docker.getContainer(containerId).stats({ stream: true })) as unknown as Readable;
  const sampleListeners = new Set<(sample: StatsSample) => void>();
  const endListeners = new Set<(reason: string) => void>();
  let ended = false;
  let buffered = '';

  const end = (reason: string) => {
    if (ended) return;
    ended = true;
    for (const cb of endListeners) cb(reason);
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line) continue;
      let sample: StatsSample;
      try {
        sample = toSample(JSON.parse(line) as RawStats, taskMemoryBytes);
      } catch (e) {
        log.warn(`unreadable stats line from ${containerId.slice(0, 12)}: ${(e as Error).message}`);
        continue;
      }
      for (const cb of sampleListeners) cb(sample);
    }
  });
  stream.on('end', () => end('the container stopped'));
  stream.on('close', () => end('closed'));
  stream.on('error', (e) => end(`stats stream failed: ${e.message}`));

  return {
    onSample: (cb) => {
      sampleListeners.add(cb);
      return () => sampleListeners.delete(cb);
    },
    onEnd: (cb) => {
      endListeners.add(cb);
      return () => endListeners.delete(cb);
    },
    close: () => {
      stream.destroy();
      end('closed');
    },
  };
}
