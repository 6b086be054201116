import type { ContainerSpec } from './client.js';
import { GVISOR_RUNTIME } from './runtime.js';

/**
 * What differs when a sandbox runs on gVisor (`runsc`). gVisor runs the sandbox on a kernel
 * of its own (the Sentry, a user-space process on the host), so the host's cgroup limits
 * bound the Sentry and its helpers, not the sandbox's processes one by one:
 *
 * - pids: the host's pids limit counts the Sentry's own threads (tens of them) and, on the
 *   ptrace platform, a host thread or stub process per guest task; at the task's limit
 *   (64, 256) the Sentry cannot start a thread and the whole sandbox dies ("error
 *   initializing first thread"). The agent's processes are bounded inside instead, by
 *   RLIMIT_NPROC (nproc), which gVisor's kernel enforces per user in the sandbox: every
 *   process of the agent's (uid 1000) counts, and a fork past the limit gets EAGAIN as under
 *   runc's pids cgroup. The host limit stays as a backstop with room for the Sentry.
 * - memory: the guest's memory, its tmpfs mounts included, is the Sentry's; the host limit
 *   gets room for the Sentry itself. gVisor has no OOM killer of its own: past the limit the
 *   host's kills the Sentry, so the sandbox ends (its calls report `oom`) instead of one
 *   command being killed (README: Security model, gVisor).
 *
 * On runc nproc is left alone: there RLIMIT_NPROC counts the user's processes host-wide
 * (uid 1000 is often the person at the desktop), and the pids cgroup already bounds the
 * sandbox.
 */

/** Host threads and processes the Sentry and gofer need beside the guest's tasks (about 40 idle). */
export const GVISOR_HOST_PIDS = 256;
/** Host threads and processes per guest process at most (ptrace platform: a stub process and its threads; ~5.5 measured). */
export const GVISOR_HOST_PIDS_PER_TASK = 8;
/** Memory the Sentry needs for itself beside the guest's (its own heap, page tables, caches). */
export const GVISOR_MEMORY_OVERHEAD = 128 * 1024 * 1024;

/** Whether a sandbox on `runtime` (the effective one: asked for, else the engine's default) runs on gVisor. */
export function isGvisor(runtime: string | null | undefined): boolean {
  return runtime === GVISOR_RUNTIME;
}

/** The container spec for `runtime`: {@link ContainerSpec} as it is on runc, adjusted for gVisor (see above). */
export function specForRuntime(spec: ContainerSpec, runtime: string | null | undefined): ContainerSpec {
  if (!isGvisor(runtime)) return spec;
  const host = spec.HostConfig ?? {};
  const pids = host.PidsLimit ?? 256;
  const memory = host.Memory ? host.Memory + GVISOR_MEMORY_OVERHEAD : undefined;
  const ulimits = (host.Ulimits ?? []).filter((u) => u.Name !== 'nproc');
  return {
    ...spec,
    HostConfig: {
      ...host,
      // Measured on the ptrace platform: ~38 host tasks idle, ~5.5 more per guest process.
      PidsLimit: GVISOR_HOST_PIDS_PER_TASK * pids + GVISOR_HOST_PIDS,
      ...(memory ? { Memory: memory, MemorySwap: memory } : {}),
      Ulimits: [...ulimits, { Name: 'nproc', Soft: pids, Hard: pids }],
    },
  };
}
