import Docker from 'dockerode';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { OWNER_LABEL, STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { ownerLabel } from '../../electron/engine/docker/owner.js';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { ensureRuntimeVolume } from '../../electron/engine/docker/runtime-volume.js';
import { RUNTIME_MOUNT } from '../../electron/engine/sandbox/sandbox-runtime.js';

/** Label on every container the CLI slice's tests start, so a leak is easy to find. */
export const TEST_LABEL = 'stepbox.test';

/** The Docker client for tests (DOCKER_HOST or the local socket). */
export const docker = new Docker();

/**
 * Starts a plain sandbox-image container without network, with stepbox's runtime mounted as in
 * a sandbox (the terminal starts with its bash); the caller removes it. It carries the owner
 * labels, so if this test process dies the next stepbox start sweeps it.
 */
export async function startPlainContainer(name: string): Promise<Docker.Container> {
  const runtime = await ensureRuntimeVolume(new DockerEngine(docker), SANDBOX_IMAGE);
  const container = await docker.createContainer({
    Image: SANDBOX_IMAGE,
    Cmd: ['sleep', 'infinity'],
    Labels: { [TEST_LABEL]: name, [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel() },
    HostConfig: {
      NetworkMode: 'none',
      Init: true,
      Memory: 256 * 1024 ** 2,
      PidsLimit: 64,
      Mounts: [{ Type: 'volume', Source: runtime, Target: RUNTIME_MOUNT, ReadOnly: true }],
    },
  });
  await container.start();
  return container;
}

/** Resolves when `check()` turns true, re-checking on every `tick`; rejects after `timeoutMs` with `what`. */
export function waitUntil(
  check: () => boolean,
  subscribe: (tick: () => void) => () => void,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (check()) return resolve();
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const unsubscribe = subscribe(() => {
      if (!check()) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });
}
