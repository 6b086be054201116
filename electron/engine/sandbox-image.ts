import { buildSandboxImage, ImageBuildError, type ImageBuildResult } from './docker/image.js';
import type { DockerEngine } from './docker/client.js';
import { dockerReachable } from './docker/ping.js';

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

/** What {@link buildImage} answers: the image built, or why not. */
export type BuildImageResponse =
  | { readonly ok: true; readonly value: ImageBuildResult }
  | { readonly ok: false; readonly error: BuildImageFailure };

/**
 * Builds the sandbox image on `engine` (an engine's one connection: `Engine.buildSandboxImage`),
 * by the registry or the offline path (`docker/image.ts`); the engine's kind picks the offline
 * importer (Podman's own client on Podman). Errors come back as values.
 */
export async function buildImage(
  engine: DockerEngine,
  options: BuildImageOptions,
): Promise<BuildImageResponse> {
  const docker = engine.docker;
  const reach = await dockerReachable(engine, undefined, options.env);
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
