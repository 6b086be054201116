import { DEFAULT_WORKDIR } from '../../../shared/constants.js';
import { shellQuote } from '../tools/shell-quote.js';
import { SANDBOX_UID } from '../../../shared/constants.js';
import type { DockerEngine } from './client.js';
import type { ContainerSpec } from './client.js';
import type { EngineKind } from './engine-kind.js';
import { SandboxFailure } from '../sandbox/sandbox.js';
import { ROOT_LOADER_ENV, ROOT_PATH } from '../sandbox/root-exec.js';
import { RUNTIME_APPLETS, RUNTIME_BASH } from '../sandbox/sandbox-runtime.js';

/**
 * What differs between engines that speak the Docker API. {@link containerSpec} is the
 * sandbox as Docker runs it; on Podman the same guarantees need a few changes, made here so
 * the spec itself stays one concept:
 *
 * - tmpfs options: Podman (4.3) refuses `uid=`/`gid=` ("unknown mount option"), and copies
 *   the image's files into a tmpfs by default (`tmpcopyup`: $HOME would start with the
 *   image's dotfiles). So no ids, `notmpcopyup`, and the owner is set by {@link prepareSandbox}.
 * - `/var/tmp`: with a read-only root Podman mounts a writable tmpfs there (outside the
 *   limits and the snapshots). A read-only tmpfs of our own takes its place, as on Docker
 *   where /var/tmp is part of the read-only root.
 * - rlimits: Podman asks the runtime for nofile 1048576 and nproc 4194304, which a host
 *   without CAP_SYS_RESOURCE (nested, or rootless with lower hard limits) cannot grant:
 *   the container fails to start ("error setting rlimit type 7"). Explicit values below
 *   common hard limits instead.
 * - /etc/hosts: Podman copies the host's entries and adds `host.containers.internal`;
 *   {@link prepareSandbox} writes Docker's file for network `none`.
 */

/** nofile and nproc inside a Podman sandbox: at or below common hard limits of a user session (nofile 4096, nproc ≥ 8192 on hosts with ≥ 2 GiB); the pids cgroup limit is what bounds processes. */
export const PODMAN_ULIMITS = [
  { Name: 'nofile', Soft: 4096, Hard: 4096 },
  { Name: 'nproc', Soft: 8192, Hard: 8192 },
] as const;

/** Size of the read-only tmpfs over Podman's /var/tmp: nothing can be written to it anyway. */
const VAR_TMP_BYTES = 4096;

/** One tmpfs option string, without `uid=`/`gid=` and with `notmpcopyup` (Podman). */
function podmanTmpfsOptions(options: string): string {
  const kept = options.split(',').filter((o) => !/^(uid|gid)=/.test(o) && o !== 'tmpcopyup');
  return [...kept, 'notmpcopyup'].join(',');
}

/** The container spec for `kind`: {@link containerSpec}'s as it is for Docker, adjusted for Podman (see above). */
export function specForEngine(spec: ContainerSpec, kind: EngineKind): ContainerSpec {
  if (kind === 'docker') return spec;
  const host = spec.HostConfig ?? {};
  const tmpfs = Object.fromEntries(
    Object.entries(host.Tmpfs ?? {}).map(([path, options]) => [path, podmanTmpfsOptions(options)]),
  );
  tmpfs['/var/tmp'] = `ro,nosuid,nodev,noexec,size=${VAR_TMP_BYTES},mode=1777,notmpcopyup`;
  return {
    ...spec,
    HostConfig: { ...host, Tmpfs: tmpfs, Ulimits: PODMAN_ULIMITS.map((u) => ({ ...u })) },
  };
}

/** /etc/hosts of a Docker container with network `none`: localhost only, no entry of the host's. */
export const DOCKER_NONE_HOSTS = [
  '127.0.0.1\tlocalhost',
  '::1\tlocalhost ip6-localhost ip6-loopback',
  'fe00::0\tip6-localnet',
  'ff00::0\tip6-mcastprefix',
  'ff02::1\tip6-allnodes',
  'ff02::2\tip6-allrouters',
  '',
].join('\n');

/**
 * The one-time setup a freshly started Podman sandbox needs before its helper starts, as a
 * shell script run as root: the working directory and $HOME handed to the sandbox user (what the tmpfs
 * `uid=`/`gid=` options do on Docker), and for network `none` /etc/hosts replaced by
 * Docker's (Podman mounts its own read-only, so it is remounted writable for the write and
 * read-only again). Null on Docker, where the spec alone does all of it.
 */
export function prepareScript(
  kind: EngineKind,
  network: string,
  workdir: string = DEFAULT_WORKDIR,
): string | null {
  if (kind === 'docker') return null;
  const ids = `${SANDBOX_UID}:${SANDBOX_UID}`;
  const lines = ['set -e', `chown ${ids} ${shellQuote(workdir)} /home/agent`];
  if (network === 'none')
    lines.push(
      'mount -o remount,rw,bind /etc/hosts',
      `printf '%s' '${DOCKER_NONE_HOSTS}' > /etc/hosts`,
      'mount -o remount,ro,bind /etc/hosts',
    );
  return lines.join('\n');
}

/**
 * Runs {@link prepareScript} in a started container by one privileged exec, before anything
 * of the agent's runs there (the helper starts after it): the container itself keeps every
 * capability but the helper's dropped, and no process of the sandbox's can join that exec.
 */
export async function prepareSandbox(
  engine: DockerEngine,
  id: string,
  kind: EngineKind,
  network: string,
  workdir: string = DEFAULT_WORKDIR,
): Promise<void> {
  const script = prepareScript(kind, network, workdir);
  if (script === null) return;
  // The runtime's bash, its busybox applets after the image's own tools: the image may have
  // no shell, chown or mount (sandbox-runtime.ts).
  const { exitCode, output } = await engine.execOnce(id, [RUNTIME_BASH, '-c', script], {
    user: '0:0',
    privileged: true,
    env: [`PATH=${ROOT_PATH}:${RUNTIME_APPLETS}`, ...ROOT_LOADER_ENV],
  });
  if (exitCode !== 0)
    throw new SandboxFailure(
      'sandbox_failed',
      `preparing Podman sandbox ${id.slice(0, 12)} (owner of ${workdir} and $HOME, /etc/hosts) failed with exit ${exitCode}: ${output.trim().slice(-400)}`,
    );
}
