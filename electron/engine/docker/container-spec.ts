import { SANDBOX_ENV, SANDBOX_HOSTNAME, SANDBOX_UID } from '../../../shared/constants.js';
import type { SandboxConfig } from '../sandbox/sandbox.js';
import type { ContainerSpec } from './client.js';

/** The label every stepbox container carries. */
export const STEPBOX_LABEL = 'stepbox';
/** The label naming the process that owns a container (see owner.ts). */
export const OWNER_LABEL = 'stepbox.owner';

/**
 * Name prefix of a sandbox kept past its process (`stepbox run --keep`): the orphan sweep
 * leaves these alone. A name, not a label, because labels are fixed at creation and only a
 * finished run knows it keeps its sandbox (a `--keep` run that is killed half-way is still
 * swept).
 */
export const KEPT_NAME_PREFIX = 'stepbox-kept-';

/** The name a kept sandbox gets. */
export function keptName(id: string): string {
  return KEPT_NAME_PREFIX + id.slice(0, 12);
}

const MIB = 1024 * 1024;

/** Size of the /tmp tmpfs: a quarter of the workspace, between 64 MiB and 512 MiB. */
function tmpBytes(diskBytes: number): number {
  return Math.min(512 * MIB, Math.max(64 * MIB, Math.floor(diskBytes / 4)));
}

/**
 * The container for a sandbox, with the design's security defaults: no network unless the
 * task names one, read-only root, tmpfs /workspace (size-limited, exec, the sandbox
 * user's) and /tmp and $HOME (the root is read-only, so HOME must be a tmpfs too),
 * `Init: true` to reap zombies, non-root, no capabilities, no-new-privileges, swap equal
 * to memory, CPU and PID limits. tmpfs pages count against the memory limit. The Docker
 * socket is never mounted. The container's main process is `sleep infinity`; all work
 * happens through the helper (one exec).
 */
export function containerSpec(config: SandboxConfig, ownerLabel: string): ContainerSpec {
  const { limits } = config;
  const ids = `uid=${SANDBOX_UID},gid=${SANDBOX_UID}`;
  return {
    Image: config.image,
    Cmd: ['sleep', 'infinity'],
    Hostname: SANDBOX_HOSTNAME,
    User: `${SANDBOX_UID}:${SANDBOX_UID}`,
    WorkingDir: '/workspace',
    Env: Object.entries(SANDBOX_ENV).map(([k, v]) => `${k}=${v}`),
    Labels: { [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel },
    NetworkDisabled: config.network === 'none',
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      NetworkMode: config.network,
      ReadonlyRootfs: true,
      Init: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Memory: limits.memoryBytes,
      MemorySwap: limits.memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pids,
      Tmpfs: {
        '/workspace': `rw,exec,size=${limits.diskBytes},${ids},mode=0755`,
        '/tmp': `rw,exec,nosuid,size=${tmpBytes(limits.diskBytes)},mode=1777`,
        '/home/agent': `rw,exec,nosuid,size=${64 * MIB},${ids},mode=0755`,
      },
      AutoRemove: false,
      Privileged: false,
      Binds: [],
      LogConfig: { Type: 'none', Config: {} },
    },
  };
}
