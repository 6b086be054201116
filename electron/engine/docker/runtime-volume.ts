import { SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from '../../../shared/constants.js';
import { logger } from '../log.js';
import { loadSandboxResource } from '../sandbox/sandbox-resources.js';
import { RUNTIME_DIR, RUNTIME_MARK, RUNTIME_MOUNT } from '../sandbox/sandbox-runtime.js';
import { SandboxFailure } from '../sandbox/sandbox.js';
import type { DockerEngine } from './client.js';
import { OWNER_LABEL, STEPBOX_LABEL } from './container-spec.js';
import { specForEngine } from './engine-flavour.js';
import { ownerLabel } from './owner.js';
import { pruneUnusedVolumes, type VolumePrune } from './volume-prune.js';

const log = logger('runtime');

/** The label naming the runtime version a volume holds. */
export const RUNTIME_VOLUME_LABEL = 'stepbox.runtime';

/** How long building the runtime may take (a copy of ~50 MB inside the engine). */
const FILL_TIMEOUT_MS = 180_000;

/** What every runtime volume's name starts with, whatever version it holds. */
export const RUNTIME_VOLUME_PREFIX = 'stepbox-runtime-';

/** The volume holding stepbox's sandbox runtime of this build (one per stepbox image version). */
export function runtimeVolumeName(version: string = SANDBOX_IMAGE_VERSION): string {
  return `${RUNTIME_VOLUME_PREFIX}${version}`;
}

/**
 * Removes the runtime volumes of other builds (stepbox's, named `stepbox-runtime-*`, not
 * this build's {@link runtimeVolumeName}) that no container uses, running or stopped; lists
 * them only on a dry run. Nothing here reads the version part of a name: any other name is
 * an old build's runtime, which a newer stepbox never mounts again (an older one still in
 * use on this engine refills its own on its next start).
 */
export async function pruneRuntimeVolumes(
  engine: DockerEngine,
  dryRun: boolean,
  /** More labels a volume must carry (`key=value`): a test prunes only its own. */
  alsoLabelled: readonly string[] = [],
): Promise<VolumePrune> {
  const current = runtimeVolumeName();
  const old = (await engine.volumesByLabel([`${STEPBOX_LABEL}=1`, ...alsoLabelled])).filter(
    (v) => v.name.startsWith(RUNTIME_VOLUME_PREFIX) && v.name !== current,
  );
  return pruneUnusedVolumes(engine, old, dryRun, log);
}

const ensured = new WeakMap<DockerEngine, Promise<string>>();

/**
 * The runtime volume of this build on `engine`, made on first use from the stepbox image
 * (resources/sandbox/runtime.py in a throwaway container with the volume mounted): once per
 * engine and runtime version, later processes only look that it is complete (a created,
 * never started container of `image`, ~50 ms, once per process). The builder moves the
 * runtime into place in one rename, so a volume half-filled by a killed process, or being
 * filled by another one right now, reads as incomplete and is filled again (both fills
 * end with one complete runtime).
 */
export function ensureRuntimeVolume(engine: DockerEngine, image: string): Promise<string> {
  let p = ensured.get(engine);
  if (!p) {
    p = (async () => {
      const name = runtimeVolumeName();
      const labels = { [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel() };
      if ((await engine.hasVolume(name)) && (await engine.volumeHasFile(name, image, RUNTIME_MARK, labels)))
        return name;
      await fillRuntimeVolume(engine, name);
      return name;
    })();
    ensured.set(engine, p);
    p.catch(() => ensured.delete(engine));
  }
  return p;
}

async function fillRuntimeVolume(engine: DockerEngine, name: string): Promise<void> {
  const t0 = performance.now();
  if (!(await engine.hasImage(SANDBOX_IMAGE)))
    throw new SandboxFailure(
      'image_missing',
      `stepbox's sandbox runtime (python3, bash and the tools its helper uses inside every sandbox, whatever the task's image) is made from the stepbox image ${SANDBOX_IMAGE}, which is not in the engine`,
      'npx stepbox image build',
    );
  await engine.createVolume(name, { [STEPBOX_LABEL]: '1', [RUNTIME_VOLUME_LABEL]: SANDBOX_IMAGE_VERSION });
  const source = loadSandboxResource('runtime.py').toString('utf8');
  // Podman needs its explicit limits (engine-flavour.ts) for any container to start.
  const { kind } = await engine.info();
  const { exitCode, output } = await engine.runToEnd(
    specForEngine(
      {
        Image: SANDBOX_IMAGE,
        Cmd: ['python3', '-I', '-S', '-c', source, RUNTIME_DIR, SANDBOX_IMAGE_VERSION],
        User: '0:0',
        WorkingDir: '/',
        Labels: { [STEPBOX_LABEL]: '1', [OWNER_LABEL]: ownerLabel() },
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'volume', Source: name, Target: RUNTIME_MOUNT, ReadOnly: false }],
        },
      },
      kind,
    ),
    FILL_TIMEOUT_MS,
  );
  if (exitCode !== 0)
    throw new SandboxFailure(
      'sandbox_failed',
      `building stepbox's sandbox runtime in volume ${name} failed (exit ${exitCode}): ${output.trim().slice(-600)}`,
      `npx stepbox image build (the runtime is made from ${SANDBOX_IMAGE}), then try again`,
    );
  log.info(`made the sandbox runtime in volume ${name} in ${Math.round(performance.now() - t0)} ms`);
}

const platforms = new WeakMap<DockerEngine, Map<string, Promise<void>>>();

/**
 * Refuses an image that cannot host a sandbox: one not built for Linux, or for another
 * architecture than the runtime's (the stepbox image's: the engine's own). Nothing else is
 * asked of an image — its shell, python3 and users come from the runtime. A missing image
 * passes here (the container's creation says so, with its fix).
 */
export function checkImagePlatform(engine: DockerEngine, image: string): Promise<void> {
  let known = platforms.get(engine);
  if (!known) platforms.set(engine, (known = new Map()));
  let p = known.get(image);
  if (!p) {
    p = (async () => {
      const [mine, runtime] = await Promise.all([
        engine.imagePlatform(image),
        image === SANDBOX_IMAGE ? null : engine.imagePlatform(SANDBOX_IMAGE),
      ]);
      if (!mine) return;
      const want = runtime ?? { os: 'linux', architecture: mine.architecture };
      if (mine.os === want.os && mine.architecture === want.architecture) return;
      throw new SandboxFailure(
        'sandbox_failed',
        `the image ${image} is built for ${mine.os}/${mine.architecture}; a sandbox needs a ${want.os}/${want.architecture} image (the engine's platform: stepbox brings its own shell and python3 into any image, but they cannot run another platform's programs)`,
        `use a ${want.os}/${want.architecture} build of the image (e.g. \`docker pull --platform ${want.os}/${want.architecture} ${image}\`, or build it on this engine)`,
      );
    })();
    known.set(image, p);
    p.catch(() => known.delete(image));
  }
  return p;
}
