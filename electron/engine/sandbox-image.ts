import { buildSandboxImage, ImageBuildError, type ImageBuildResult } from './docker/image.js';
import { dockerClient, dockerReachable } from './docker/ping.js';

export type { ImageBuildResult } from './docker/image.js';

/** Options of {@link buildImage}. */
export interface BuildImageOptions {
  /** Skip the registry probe and take the offline path. */
  readonly offline: boolean;
  /** Build under another tag (default the sandbox image's). */
  readonly tag?: string;
  /** One line of progress (the CLI prints it to stderr). */
  readonly progress: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** Why {@link buildImage} built nothing: the engine did not answer, or the build failed. */
export type BuildImageFailure =
  | { readonly code: 'docker_unreachable'; readonly message: string; readonly fix: string }
  | { readonly code: ImageBuildError['code']; readonly message: string; readonly fix?: string };

/**
 * Builds the sandbox image on the engine in the environment (DOCKER_HOST or the local
 * socket), by the registry or the offline path (`docker/image.ts`); the engine's kind picks
 * the offline importer (Podman's own client on Podman). Errors come back as values.
 */
export async function buildImage(
  options: BuildImageOptions,
): Promise<{ ok: true; value: ImageBuildResult } | { ok: false; error: BuildImageFailure }> {
  const docker = dockerClient();
  const reach = await dockerReachable(docker, undefined, options.env);
  if (!reach.ok) {
    return {
      ok: false,
      error: {
        code: 'docker_unreachable',
        message: `the engine is unreachable: ${reach.detail}`,
        fix: reach.fix,
      },
    };
  }
  try {
    const value = await buildSandboxImage({
      docker,
      ...(reach.engine ? { engine: reach.engine.kind } : {}),
      offline: options.offline,
      ...(options.tag ? { tag: options.tag } : {}),
      progress: options.progress,
    });
    return { ok: true, value };
  } catch (e) {
    if (e instanceof ImageBuildError) {
      return { ok: false, error: { code: e.code, message: e.message, ...(e.fix ? { fix: e.fix } : {}) } };
    }
    throw e;
  }
}
