import type { DockerStatus, SandboxDetails, WarmSandboxes } from '../../shared/contract/index.js';
import type { EpisodeManager } from './episode-manager.js';
import type { DockerPort } from './ports.js';

/**
 * `sandbox.info`: Docker's status, the warm pool's idle sandboxes, and for a live branch its
 * sandbox (null for a recorded one).
 */
export async function sandboxInfo(
  docker: DockerPort,
  episodes: EpisodeManager,
  id: string | undefined,
): Promise<{ docker: DockerStatus; sandbox: SandboxDetails | null; warm?: WarmSandboxes }> {
  const [status, warm] = await Promise.all([docker.status(), docker.warm?.()]);
  const controller = id ? episodes.find(id) : null;
  const sandbox = controller?.sandbox() ?? null;
  if (!controller || !sandbox) return { docker: status, sandbox: null, ...(warm ? { warm } : {}) };
  const { limits } = sandbox.config;
  return {
    docker: status,
    ...(warm ? { warm } : {}),
    sandbox: {
      id: sandbox.id,
      backend: sandbox.backend,
      image: sandbox.config.image,
      network: sandbox.config.network,
      limits: {
        cpus: limits.cpus,
        memory_bytes: limits.memoryBytes,
        pids: limits.pids,
        disk_bytes: limits.diskBytes,
        output_bytes: limits.outputBytes,
      },
      state: controller.state() === 'ended' ? 'gone' : 'running',
    },
  };
}
