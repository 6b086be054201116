import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { IMAGE_VERSION_LABEL, SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from '../../../shared/constants.js';
import type { EngineKind } from './engine-kind.js';

/** Where the registry probe goes unless `STEPBOX_REGISTRY_PROBE_URL` says otherwise. */
export const DEFAULT_REGISTRY_PROBE_URL = 'https://registry-1.docker.io/v2/';
/** The probe's bound: a registry that does not answer within it counts as unreachable. */
export const REGISTRY_PROBE_TIMEOUT_MS = 5_000;

/** Which way the image was built: `docker build` of the Dockerfile, or the debootstrap builder. */
export type ImageBuildPath = 'registry' | 'offline';

/** What `buildSandboxImage` made. */
export interface ImageBuildResult {
  readonly tag: string;
  readonly version: string;
  readonly path: ImageBuildPath;
  /** Why this path was taken, for the person watching. */
  readonly reason: string;
  readonly durationMs: number;
}

/** Options of {@link buildSandboxImage}. */
export interface ImageBuildOptions {
  readonly docker: Docker;
  readonly tag?: string;
  readonly version?: string;
  /** Skip the registry probe and take the offline path. */
  readonly offline?: boolean;
  readonly probeUrl?: string;
  /** The engine the image is for: the offline path imports with its client (`podman import` on Podman). Default docker. */
  readonly engine?: EngineKind;
  /** One line of progress (goes to stderr in the CLI). */
  readonly progress: (line: string) => void;
}

/** Why an image build could not finish; `fix` is the command that fixes it when there is one. */
export class ImageBuildError extends Error {
  override readonly name = 'ImageBuildError';
  constructor(
    readonly code: 'tool_missing' | 'build_failed',
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

/** What the engine has under the sandbox image's tag. */
export interface ImageState {
  readonly present: boolean;
  /** The `stepbox.image.version` label, when the image has one. */
  readonly version?: string;
}

/** The project root (holds package.json), found from this file whether it runs from source or dist/. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'stepbox')
      return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error('cannot find the stepbox project root above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** The directory holding the Dockerfile and the offline builder. */
export function sandboxResourcesDir(): string {
  return join(projectRoot(), 'resources', 'sandbox');
}

/** Looks up the sandbox image and its version label. */
export async function inspectSandboxImage(docker: Docker, tag = SANDBOX_IMAGE): Promise<ImageState> {
  try {
    const info = await docker.getImage(tag).inspect();
    const version = info.Config?.Labels?.[IMAGE_VERSION_LABEL];
    return version === undefined ? { present: true } : { present: true, version };
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 404) return { present: false };
    throw e;
  }
}

/**
 * True when an image registry answers within the bound. Any HTTP answer counts (the
 * registry's `/v2/` says 401 to anonymous callers); DNS failure, refusal or silence do not.
 */
export async function probeRegistry(
  url = process.env.STEPBOX_REGISTRY_PROBE_URL ?? DEFAULT_REGISTRY_PROBE_URL,
  timeoutMs = REGISTRY_PROBE_TIMEOUT_MS,
): Promise<boolean> {
  try {
    const res = await fetch(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return true;
  } catch {
    // Unreachable for any reason (DNS, refused, timeout): the offline path is the answer.
    return false;
  }
}

/**
 * Builds the sandbox image: `docker build` of resources/sandbox/Dockerfile when a registry
 * answers the probe, else the offline debootstrap builder. Labels it with the version
 * `doctor` compares. Rejects with {@link ImageBuildError}.
 */
export async function buildSandboxImage(options: ImageBuildOptions): Promise<ImageBuildResult> {
  const tag = options.tag ?? SANDBOX_IMAGE;
  const version = options.version ?? SANDBOX_IMAGE_VERSION;
  const started = performance.now();
  let path: ImageBuildPath = 'offline';
  let reason = 'offline requested (--offline)';
  if (!options.offline) {
    const url = options.probeUrl ?? process.env.STEPBOX_REGISTRY_PROBE_URL ?? DEFAULT_REGISTRY_PROBE_URL;
    options.progress(`[image] probing the registry at ${url} (≤ ${REGISTRY_PROBE_TIMEOUT_MS / 1000} s)`);
    const reachable = await probeRegistry(url);
    path = reachable ? 'registry' : 'offline';
    reason = reachable ? `the registry at ${url} answered` : `the registry at ${url} is unreachable`;
  }
  options.progress(`[image] building ${tag} (version ${version}) by the ${path} path: ${reason}`);
  if (path === 'registry') {
    try {
      await buildFromDockerfile(options.docker, tag, version, options.progress);
    } catch (e) {
      // A registry that answers a probe can still refuse a pull (rate limits, auth).
      path = 'offline';
      reason = `the registry path failed (${(e as Error).message})`;
      options.progress(`[image] ${reason}; falling back to the offline path`);
      await buildOffline(tag, version, options.progress, options.engine ?? 'docker');
    }
  } else await buildOffline(tag, version, options.progress, options.engine ?? 'docker');

  const state = await inspectSandboxImage(options.docker, tag);
  if (!state.present || state.version !== version) {
    throw new ImageBuildError(
      'build_failed',
      `the build finished but ${tag} has ${state.present ? `version label ${state.version ?? '(none)'}` : 'no image'}, expected ${version}`,
    );
  }
  return { tag, version, path, reason, durationMs: performance.now() - started };
}

async function buildFromDockerfile(
  docker: Docker,
  tag: string,
  version: string,
  progress: (line: string) => void,
): Promise<void> {
  const stream = await docker.buildImage(
    { context: sandboxResourcesDir(), src: ['Dockerfile'] },
    // Host network: on a --bridge=none engine the default build network has no route out.
    {
      t: tag,
      buildargs: { VERSION: version },
      labels: { [IMAGE_VERSION_LABEL]: version },
      networkmode: 'host',
      rm: true,
    },
  );
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? reject(new ImageBuildError('build_failed', err.message)) : resolve()),
      (event: { stream?: string; status?: string; error?: string }) => {
        const text = (event.stream ?? event.status ?? '').trimEnd();
        if (text) progress(`[image] ${text}`);
        if (event.error) reject(new ImageBuildError('build_failed', `docker build: ${event.error}`));
      },
    );
  });
}

/**
 * The builder's exit-3 line as an error: its message names the missing tool or right and
 * either the exact command (`run: …`) or the package that installs it.
 */
export function missingTool(line: string): ImageBuildError {
  const message = line.replace(/^stepbox: /, '');
  const run = /; run: (.+)$/.exec(message)?.[1];
  const install = /apt-get install -y \S+/.exec(message)?.[0];
  const fix =
    run ??
    (install ? `sudo ${install}` : /\bsudo\b/.test(message) ? 'sudo npx stepbox image build' : undefined);
  return new ImageBuildError('tool_missing', message, fix);
}

async function buildOffline(
  tag: string,
  version: string,
  progress: (line: string) => void,
  engine: EngineKind,
): Promise<void> {
  const script = join(sandboxResourcesDir(), 'build-offline.sh');
  // STEPBOX_DEBIAN_MIRROR points debootstrap at a local mirror or apt proxy.
  const mirror = process.env.STEPBOX_DEBIAN_MIRROR;
  const child = spawn('bash', [script, tag, version, ...(mirror ? [mirror] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, STEPBOX_ENGINE: engine },
  });
  let last = '';
  const relay = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      last = line;
      progress(line.startsWith('[image]') ? line : `[image] ${line}`);
    }
  };
  child.stdout.on('data', relay);
  child.stderr.on('data', relay);
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (code === 3) throw missingTool(last);
  if (code !== 0) throw new ImageBuildError('build_failed', `the offline builder exited ${code}: ${last}`);
}
