import { SANDBOX_ENV, SANDBOX_HOSTNAME, SANDBOX_UID } from '../../../shared/constants.js';
import { DEFAULT_HOME_BYTES, type SandboxConfig } from '../sandbox/sandbox.js';
import type { ContainerSpec } from './client.js';
import { AGENT_DIR } from '../sandbox/agent-files.js';

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
/**
 * Inside a sandbox: a tmpfs only root may enter (0700), holding {@link CHANNEL_DIR}. No
 * process of the agent's (uid 1000) can pass it, so none can reach the helper's socket, list
 * its folder or swap it, whoever owns the host folder (the host user may be uid 1000 too).
 */
export const CHANNEL_ROOT = '/run/stepbox';
/** Inside a sandbox: the host's socket folder (helper-socket.ts), bind-mounted read-only. */
export const CHANNEL_DIR = `${CHANNEL_ROOT}/channel`;
/** Size of the tmpfs holding the helper's socket folder (it holds nothing else). */
const CHANNEL_ROOT_BYTES = 64 * 1024;

/** Size of the /tmp tmpfs: a quarter of the workspace, between 64 MiB and 512 MiB. */
function tmpBytes(diskBytes: number): number {
  return Math.min(512 * MIB, Math.max(64 * MIB, Math.floor(diskBytes / 4)));
}

/**
 * Capabilities the container keeps (everything else is dropped). Only the helper has them:
 * it runs as root in its own exec to be another user than the agent (see helper.py) and
 * needs SETUID/SETGID to start the agent's shells as uid 1000 and to do file operations
 * with the agent's filesystem identity, KILL to stop the agent's processes, and SETPCAP to
 * empty the bounding set of the agent's shells (and the verifier's). A process of uid 1000
 * holds none of them, not even in its bounding set, and, with no-new-privileges, never
 * gains one.
 */
export const HELPER_CAPABILITIES = ['SETUID', 'SETGID', 'KILL', 'SETPCAP'] as const;

/** The uid:gid every process of the agent (commands, verifier, terminal) runs as. */
export const AGENT_USER = `${SANDBOX_UID}:${SANDBOX_UID}`;

/** The tmpfs mounts and their sizes in bytes: /workspace, /tmp, $HOME (`limits.home`, default 512 MiB). */
export function tmpfsBytes(limits: SandboxConfig['limits']): {
  workspace: number;
  tmp: number;
  home: number;
} {
  return {
    workspace: limits.diskBytes,
    tmp: tmpBytes(limits.diskBytes),
    home: limits.homeBytes ?? DEFAULT_HOME_BYTES,
  };
}

/**
 * The container's memory limit: the task's memory plus the tmpfs sizes. tmpfs pages count
 * against the memory cgroup, so without the extra room a full /workspace would be an OOM
 * kill; with it, filling /workspace is ENOSPC (`disk_full`) and a process's own memory is
 * bounded by the task's limit plus whatever the tmpfs mounts do not use.
 */
export function containerMemoryBytes(limits: SandboxConfig['limits']): number {
  const t = tmpfsBytes(limits);
  return limits.memoryBytes + t.workspace + t.tmp + t.home;
}

/**
 * The container for a sandbox, with the design's security defaults: no network unless the
 * task names one, read-only root, tmpfs /workspace (size-limited, exec, the sandbox
 * user's) and /tmp and $HOME (the root is read-only, so HOME must be a tmpfs too),
 * `Init: true` to reap zombies, every capability dropped but {@link HELPER_CAPABILITIES},
 * no-new-privileges, swap equal to memory, CPU and PID limits. The Docker socket is never
 * mounted; the helper's socket folder, where given, is mounted read-only inside a tmpfs only
 * root may enter. The container's main process is `sleep infinity` as root, so a `kill -9 -1` of
 * the agent's cannot stop the container; all work happens through the helper (one exec),
 * and every command runs as uid 1000.
 */
export function containerSpec(
  config: SandboxConfig,
  ownerLabel: string,
  /** The volume with an inside agent's files, mounted read-only at /opt/agent. */
  agentVolume?: string,
  /** The host folder of the helper's socket, mounted read-only at CHANNEL_DIR (helper-socket.ts). */
  socketDir?: string,
): ContainerSpec {
  const { limits } = config;
  const ids = `uid=${SANDBOX_UID},gid=${SANDBOX_UID}`;
  const sizes = tmpfsBytes(limits);
  const mounts: NonNullable<NonNullable<ContainerSpec['HostConfig']>['Mounts']> = [
    ...(agentVolume
      ? [{ Type: 'volume' as const, Source: agentVolume, Target: AGENT_DIR, ReadOnly: true }]
      : []),
    ...(socketDir ? [{ Type: 'bind' as const, Source: socketDir, Target: CHANNEL_DIR, ReadOnly: true }] : []),
  ];
  return {
    Image: config.image,
    Cmd: ['sleep', 'infinity'],
    Hostname: SANDBOX_HOSTNAME,
    User: '0:0',
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
      CapAdd: [...HELPER_CAPABILITIES],
      SecurityOpt: ['no-new-privileges'],
      Memory: containerMemoryBytes(limits),
      MemorySwap: containerMemoryBytes(limits),
      NanoCpus: Math.round(limits.cpus * 1e9),
      PidsLimit: limits.pids,
      Tmpfs: {
        '/workspace': `rw,exec,size=${limits.diskBytes},${ids},mode=0755`,
        '/tmp': `rw,exec,nosuid,size=${sizes.tmp},mode=1777`,
        '/home/agent': `rw,exec,nosuid,size=${sizes.home},${ids},mode=0755`,
        // Only root (the helper) may enter: the socket folder is mounted inside it.
        ...(socketDir
          ? { [CHANNEL_ROOT]: `rw,noexec,nosuid,nodev,size=${CHANNEL_ROOT_BYTES},mode=0700` }
          : {}),
      },
      AutoRemove: false,
      Privileged: false,
      Binds: [],
      ...(mounts.length ? { Mounts: mounts } : {}),
      LogConfig: { Type: 'none', Config: {} },
    },
  };
}
