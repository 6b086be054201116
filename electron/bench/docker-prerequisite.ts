import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IMAGE_VERSION_LABEL, SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from '../../shared/constants.js';
import { openEngine } from '../engine/open-engine.js';

/** Null when Docker answers and the sandbox image has this build's version; otherwise why a Docker section is skipped, with its fix. */
export async function dockerPrerequisite(): Promise<string | null> {
  // Asked through an engine like any other (its one connection); a throwaway home, so the
  // check touches no store.
  const home = await mkdtemp(join(tmpdir(), 'stepbox-bench-check-'));
  const engine = openEngine({ home, sweep: false });
  try {
    const reach = await engine.reachability();
    if (!reach.ok) return `${reach.detail} (fix: ${reach.fix})`;
    const image = await engine.sandboxImage();
    if (!image.present) return `${SANDBOX_IMAGE} is missing (fix: npx stepbox image build)`;
    if (image.version !== SANDBOX_IMAGE_VERSION)
      return `${SANDBOX_IMAGE} has ${IMAGE_VERSION_LABEL}=${image.version ?? '(none)'}, expected ${SANDBOX_IMAGE_VERSION} (fix: npx stepbox image build)`;
    return null;
  } finally {
    await engine.close();
    await rm(home, { recursive: true, force: true });
  }
}
