import type { DockerStatus, SandboxDetails } from '../../shared/contract/index.js';
import type { EpisodeManager } from './episode-manager.js';
import type { DockerPort } from './ports.js';

/** `sandbox.info`: Docker's status and, for a live branch, its sandbox (null for a recorded one). */
export async function sandboxInfo(
  docker: DockerPort,
  episodes: EpisodeManager,
  id: string | undefined,
): Promise<{ docker: DockerStatus; sandbox: SandboxDetails | null }> {
  const status = await docker.status();
  const controller = id ? episodes.find(id) : null;
  const sandbox = controller?.sandbox() ?? null;
  if (!controller || !sandbox) return { docker: status, sandbox: null };
  const { limits } = sandbox.config;
  return {
    docker: status,
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
