import Docker from 'dockerode';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { OWNER_LABEL, STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { ownerLabel } from '../../electron/engine/docker/owner.js';

/** Label on every container the CLI slice's tests start, so a leak is easy to find. */
export const TEST_LABEL = 'stepbox.test';

/** The Docker client for tests (DOCKER_HOST or the local socket). */
export const docker = new Docker();

/**
 * Starts a plain sandbox-image container without network; the caller removes it. It carries
 * the owner labels, so if this test process dies the next stepbox start sweeps it.
 */
export async function startPlainContainer(name: string): Promise<Docker.Container> {
  const container = await docker.createContainer({
    Image: SANDBOX_IMAGE,
    Cmd: ['sleep', 'infinity'],
    Labels: { [TEST_LABEL]: name, [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel() },
    HostConfig: { NetworkMode: 'none', Init: true, Memory: 256 * 1024 ** 2, PidsLimit: 64 },
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
