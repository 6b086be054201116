import { imageExists } from './client.js';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { buildContextEntries, type BuildContextEntry } from '../folder-files.js';
import { tarEnd, tarHeader, tarPadding } from './tar-writer.js';
import { SANDBOX_IMAGE } from '../../../shared/constants.js';

/** The repository of images stepbox builds from a task's Dockerfile; the tag is the context's content hash. */
export const BUILD_REPOSITORY = 'stepbox-build';
/** The label carrying the content hash of a built image's context. */
export const BUILD_HASH_LABEL = 'stepbox.build.hash';
/** How many of the build's last output lines a failure quotes. */
const LAST_LINES = 20;

/** What to build: a context folder and the Dockerfile in it (both absolute). */
export interface BuildSpec {
  readonly context: string;
  readonly dockerfile: string;
}

/** One line of a build's progress, for a person watching (CLI stderr, the window). */
export interface BuildProgress {
  /** The tag being built (or found). */
  readonly image: string;
  readonly kind: 'build';
  /** `cached`: the tag exists, nothing is built; `step`: one line of the build's output; `built`: done. */
  readonly phase: 'cached' | 'start' | 'step' | 'built';
  readonly line: string;
  /** The Dockerfile built (as the task named it, resolved): the window says where the image comes from. */
  readonly from?: string;
}

/** What {@link ensureBuilt} produced. */
export interface BuildResult {
  readonly image: string;
  /** True when the image was there already (a cache hit: nothing was built). */
  readonly cached: boolean;
  readonly durationMs: number;
}

/**
 * Why a build could not give an image (application error codes): `build_failed`, the
 * Dockerfile or its context is wrong, and `invalid_task`, `sandbox.build` names nothing
 * buildable (the user's input: CLI exit 2); `image_missing`, a base image the engine cannot
 * get (offline, a registry refusing), and `docker_unreachable` (the machine: exit 3).
 */
export class BuildError extends Error {
  override readonly name = 'BuildError';
  constructor(
    readonly code: 'build_failed' | 'image_missing' | 'docker_unreachable' | 'invalid_task',
    message: string,
    /** The step that fixes it, when it is not in the message's own words. */
    readonly fix?: string,
  ) {
    super(message);
  }
}

/**
 * The content hash of a build: every file, folder and symlink the build sends of its context
 * ({@link buildContextEntries}: path, kind, executable bit, content or target) and the
 * Dockerfile's place in it. Two contexts with the same hash build the same image; anything
 * that changes what `COPY` could see changes it, and what `.dockerignore` leaves out does not.
 */
export function buildContextHash(spec: BuildSpec): string {
  return contextHash(spec, sentEntries(spec));
}

function contextHash(spec: BuildSpec, entries: readonly BuildContextEntry[]): string {
  const h = createHash('sha256');
  h.update(`stepbox.build/2\0dockerfile\0${dockerfileInContext(spec)}\0`);
  for (const e of entries) {
    if (e.kind === 'symlink') h.update(`l\0${e.path}\0${e.target}\0`);
    else if (e.kind === 'dir') h.update(`d\0${e.path}\0`);
    else {
      const content = createHash('sha256').update(readFileSync(e.full)).digest('hex');
      h.update(`f\0${e.path}\0${e.mode & 0o111 ? 'x' : '-'}\0${content}\0`);
    }
  }
  return h.digest('hex');
}

/** The Dockerfile's path in its context, `/`-separated. */
function dockerfileInContext(spec: BuildSpec): string {
  return relative(spec.context, spec.dockerfile).split(sep).join('/');
}

/** What the build sends of its context; a path it cannot send is the task's error. */
function sentEntries(spec: BuildSpec): BuildContextEntry[] {
  const sent = buildContextEntries(spec.context, 'sandbox.build', dockerfileInContext(spec));
  if (!sent.ok) throw new BuildError('invalid_task', sent.error.message);
  return sent.value;
}

/**
 * The build context as the engine receives it: a tar of exactly `entries` (root's, as
 * `docker build` sends them), each file read through a descriptor that follows no link and
 * never more than the size it had when opened.
 */
function contextTar(entries: readonly BuildContextEntry[]): Readable {
  async function* gen(): AsyncGenerator<Buffer> {
    const buf = Buffer.alloc(1024 * 1024);
    for (const e of entries) {
      if (e.kind !== 'file') {
        yield tarHeader({
          name: e.kind === 'dir' ? `${e.path}/` : e.path,
          size: 0,
          mode: e.mode,
          type: e.kind,
          linkname: e.target,
          mtime: e.mtime,
        });
        continue;
      }
      const fd = openSync(e.full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        const st = fstatSync(fd);
        if (!st.isFile()) throw new Error(`${e.full} is no longer a regular file`);
        yield tarHeader({ name: e.path, size: st.size, mode: e.mode, type: 'file', mtime: e.mtime });
        let sent = 0;
        while (sent < st.size) {
          const n = readSync(fd, buf, 0, Math.min(buf.length, st.size - sent), sent);
          if (n <= 0) throw new Error(`${e.full} shrank while it was sent`);
          sent += n;
          yield Buffer.from(buf.subarray(0, n));
        }
        yield tarPadding(st.size);
      } finally {
        closeSync(fd);
      }
    }
    yield tarEnd();
  }
  return Readable.from(gen());
}

/** The tag of the image built from a context with `hash`. */
export function buildTag(hash: string): string {
  return `${BUILD_REPOSITORY}:${hash.slice(0, 24)}`;
}

/**
 * Resolves a task's `sandbox.build` against `baseDir` (the task file's folder): a Dockerfile,
 * a folder holding one, or `{context, dockerfile}` (the Dockerfile relative to the context;
 * default `Dockerfile`). Throws `invalid_task` naming what is missing and the fix.
 */
export function resolveBuild(
  build: string | { readonly context: string; readonly dockerfile?: string },
  baseDir: string,
): BuildSpec {
  const given = typeof build === 'string' ? build : build.context;
  const path = resolve(baseDir, given);
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new BuildError(
      'invalid_task',
      `sandbox.build: ${path} does not exist; name a Dockerfile or a folder holding one (relative to ${baseDir})`,
    );
  }
  let context: string;
  let dockerfile: string;
  if (typeof build === 'string' && st.isFile()) {
    context = resolve(path, '..');
    dockerfile = path;
  } else if (st.isDirectory()) {
    context = path;
    dockerfile = resolve(path, typeof build === 'string' ? 'Dockerfile' : (build.dockerfile ?? 'Dockerfile'));
  } else
    throw new BuildError(
      'invalid_task',
      `sandbox.build: the context ${path} is a file; the context is a folder (give the Dockerfile as "dockerfile")`,
    );
  const inside = relative(context, dockerfile);
  if (inside.startsWith('..') || isAbsolute(inside))
    throw new BuildError(
      'invalid_task',
      `sandbox.build: the Dockerfile ${dockerfile} lies outside its context ${context}; put it inside the context folder`,
    );
  // The same rule as the world loader's, for a task that reaches the engine another way (a recorded one).
  sentEntries({ context, dockerfile });
  try {
    if (!statSync(dockerfile).isFile()) throw new Error('not a file');
  } catch {
    throw new BuildError(
      'invalid_task',
      `sandbox.build: no Dockerfile at ${dockerfile}; add one, or name it with {"context": …, "dockerfile": …}`,
    );
  }
  return { context, dockerfile };
}

/** Words of an engine that could not get a base image (offline, unknown, refused). */
const BASE_UNAVAILABLE =
  /pull access denied|manifest unknown|not found: manifest|repository does not exist|no such host|dial tcp|i\/o timeout|TLS handshake|failed to resolve source/i;

/**
 * The image of a build: `stepbox-build:<context hash>`, built with the engine unless it has
 * that tag already (a cache hit builds nothing). Progress goes to `progress` line by line; a
 * failure rejects with a {@link BuildError} quoting the build's last lines.
 */
export async function ensureBuilt(
  docker: Docker,
  spec: BuildSpec,
  report: (p: BuildProgress) => void,
): Promise<BuildResult> {
  const progress = (p: BuildProgress) => report({ ...p, from: spec.dockerfile });
  const started = performance.now();
  const entries = sentEntries(spec);
  const hash = contextHash(spec, entries);
  const image = buildTag(hash);
  if (await hasImage(docker, image)) {
    progress({
      image,
      kind: 'build',
      phase: 'cached',
      line: `[build] ${image}: cached (context ${spec.context} unchanged)`,
    });
    return { image, cached: true, durationMs: performance.now() - started };
  }
  progress({
    image,
    kind: 'build',
    phase: 'start',
    line: `[build] building ${image} from ${spec.dockerfile}`,
  });
  const last: string[] = [];
  const note = (text: string) => {
    for (const line of text.split('\n')) {
      // eslint-disable-next-line no-control-regex
      const clean = line.replace(/\u001b\[[0-9;]*m/g, '').trimEnd();
      if (!clean) continue;
      last.push(clean);
      if (last.length > LAST_LINES) last.shift();
      progress({ image, kind: 'build', phase: 'step', line: `[build] ${clean}` });
    }
  };
  let stream: NodeJS.ReadableStream;
  try {
    // Our own tar of what Docker's rules send, not dockerode's packing of the folder (see buildContextEntries).
    stream = await docker.buildImage(contextTar(entries), {
      t: image,
      dockerfile: dockerfileInContext(spec),
      // Not the `stepbox` container label: containers of this image (a later build's steps) would carry it unowned, and sweeps would take them.
      labels: { [BUILD_HASH_LABEL]: hash },
      rm: true,
      forcerm: true,
    });
  } catch (e) {
    throw engineError(e, image);
  }
  await new Promise<void>((resolvePromise, reject) => {
    let failed: string | undefined;
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        const why = failed ?? err?.message;
        if (why === undefined) return resolvePromise();
        // The lines before the failure: the failure itself heads the message (it was said twice).
        const tail = last.map((l) => `  ${l}`).join('\n');
        note(why);
        const unavailable = BASE_UNAVAILABLE.test(why);
        reject(
          new BuildError(
            unavailable ? 'image_missing' : 'build_failed',
            `building ${spec.dockerfile} failed: ${why.trim()}\nits last lines:\n${tail}` +
              (unavailable
                ? ''
                : `\nfix the Dockerfile (try it: docker build -f ${spec.dockerfile} ${spec.context})`),
            unavailable
              ? `the engine cannot get a base image: pull it while online (docker pull IMAGE), or build FROM an image the engine has, such as ${SANDBOX_IMAGE}`
              : undefined,
          ),
        );
      },
      (event: { stream?: string; status?: string; error?: string }) => {
        if (event.error) failed = event.error;
        else note(event.stream ?? event.status ?? '');
      },
    );
  });
  if (!(await hasImage(docker, image)))
    throw new BuildError(
      'build_failed',
      `the build of ${spec.dockerfile} ended but ${image} is not in the engine`,
    );
  progress({
    image,
    kind: 'build',
    phase: 'built',
    line: `[build] built ${image} in ${Math.round(performance.now() - started)} ms`,
  });
  return { image, cached: false, durationMs: performance.now() - started };
}

/** Whether the engine has `image`; its other failures worded as this module's error. */
function hasImage(docker: Docker, image: string): Promise<boolean> {
  return imageExists(docker, image, (e) => engineError(e, image));
}

function engineError(e: unknown, image: string): BuildError {
  const err = e as { code?: string; message?: string };
  if (err?.code === 'ENOENT' || err?.code === 'ECONNREFUSED' || err?.code === 'EACCES')
    return new BuildError(
      'docker_unreachable',
      `Docker is unreachable while building ${image} (${err.message ?? String(e)}); start the engine (stepbox doctor checks it)`,
    );
  return new BuildError('build_failed', `Docker refused the build of ${image}: ${err?.message ?? String(e)}`);
}

/** A task's sandbox section as far as building goes. */
export interface BuildableSandbox {
  readonly image: string;
  readonly build?: string | { readonly context: string; readonly dockerfile?: string };
}

/**
 * A task's `sandbox.build` made into its image: the Dockerfile resolved against `baseDir`
 * (the task file's folder), built or found cached, and `sandbox.image` set to its tag (the
 * trace header records that tag; `build` stays as where it came from). Unchanged without a build.
 */
export async function withBuiltImage<T extends { readonly sandbox: BuildableSandbox }>(
  docker: Docker,
  task: T,
  baseDir: string,
  progress: (p: BuildProgress) => void,
): Promise<T> {
  const build = task.sandbox.build;
  if (build === undefined) return task;
  const built = await ensureBuilt(docker, resolveBuild(build, baseDir), progress);
  return { ...task, sandbox: { ...task.sandbox, image: built.image } };
}
