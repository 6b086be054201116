import { IMAGE_VERSION_LABEL, SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from '../../shared/constants.js';
import { inspectSandboxImage } from '../engine/docker/image.js';
import { dockerClient, dockerReachable } from '../engine/docker/ping.js';

/** Null when Docker answers and the sandbox image has this build's version; otherwise why a Docker section is skipped, with its fix. */
export async function dockerPrerequisite(): Promise<string | null> {
  const reach = await dockerReachable(dockerClient());
  if (!reach.ok) return `${reach.detail} (fix: ${reach.fix})`;
  const image = await inspectSandboxImage(dockerClient());
  if (!image.present) return `${SANDBOX_IMAGE} is missing (fix: npx stepbox image build)`;
  if (image.version !== SANDBOX_IMAGE_VERSION)
    return `${SANDBOX_IMAGE} has ${IMAGE_VERSION_LABEL}=${image.version ?? '(none)'}, expected ${SANDBOX_IMAGE_VERSION} (fix: npx stepbox image build)`;
  return null;
}
