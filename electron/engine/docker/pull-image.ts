import { imageExists } from './client.js';
import type Docker from 'dockerode';
import { SANDBOX_IMAGE } from '../../../shared/constants.js';
import { formatBytes } from '../../../shared/format-bytes.js';
import { BUILD_REPOSITORY } from './build-image.js';

/** One line of a pull's progress, for a person watching (CLI stderr, the window). */
export interface PullProgress {
  readonly image: string;
  readonly kind: 'pull';
  /** `start`: the engine lacks the image and asks its registry; `step`: a layer moved on; `pulled`: done. */
  readonly phase: 'start' | 'step' | 'pulled';
  readonly line: string;
}

/** What {@link ensurePulled} did. */
export interface PullResult {
  readonly image: string;
  /** False when the engine had the image already (nothing was pulled). */
  readonly pulled: boolean;
  readonly durationMs: number;
}

/**
 * Why an image could not be pulled (application error codes): `image_missing`, no registry
 * answered or it has no such image (the machine or the name: the message says which, and
 * the fix); `docker_unreachable`, the engine itself.
 */
export class PullError extends Error {
  override readonly name = 'PullError';
  constructor(
    readonly code: 'image_missing' | 'docker_unreachable',
    message: string,
    /** The step that fixes it. */
    readonly fix: string,
  ) {
    super(message);
  }
}

/** Words of an engine that reached no registry (offline, DNS, a proxy, a firewall). */
const UNREACHABLE =
  /dial tcp|no such host|i\/o timeout|TLS handshake|connection refused|network is unreachable|Client\.Timeout|context deadline exceeded|temporary failure in name resolution|server misbehaving/i;
/** Words of a registry that answered but has no such image for us. */
const NOT_THERE =
  /manifest unknown|not found|pull access denied|repository does not exist|unauthorized|denied|invalid reference format/i;

/** Images stepbox makes itself: never pulled (no registry has them); their own fix applies. */
function ownImage(image: string): boolean {
  return image === SANDBOX_IMAGE || image.startsWith(`${BUILD_REPOSITORY}:`);
}

/** One event of the engine's pull stream (`POST /images/create`). */
interface PullEvent {
  readonly status?: string;
  readonly id?: string;
  readonly progressDetail?: { readonly current?: number; readonly total?: number };
  readonly error?: string;
  readonly errorDetail?: { readonly message?: string };
}

/** A layer as the pull stream has told of it so far. */
interface Layer {
  status: string;
  current: number;
  total: number;
  /** The tenth of its download last reported (progress lines are per 10 %, not per event). */
  tenth: number;
}

/**
 * Makes sure the engine has `image`: nothing when it does; else pulls it through the
 * engine's API with progress — a line when the pull starts, when a layer changes state
 * (waiting, downloading, verified, extracting, complete) or moves by a tenth of its bytes,
 * each with the bytes of every layer so far — and `pulled` at the end. A pull that cannot
 * happen rejects with a {@link PullError} naming the image, why (no registry reachable, or
 * the registry has no such image) and the fix (`docker load`, a build). Images stepbox
 * builds itself are never pulled.
 */
export async function ensurePulled(
  docker: Docker,
  image: string,
  progress: (p: PullProgress) => void,
): Promise<PullResult> {
  const started = performance.now();
  if (ownImage(image) || (await hasImage(docker, image))) return { image, pulled: false, durationMs: 0 };
  progress({ image, kind: 'pull', phase: 'start', line: `[pull] ${image}: not in the engine, pulling it` });
  const layers = new Map<string, Layer>();
  const totals = () => {
    let current = 0;
    let total = 0;
    let done = 0;
    for (const l of layers.values()) {
      current += l.current;
      total += l.total;
      if (/complete|already exists/i.test(l.status)) done++;
    }
    // Sizes are known once a layer starts downloading (one already there has none).
    return (
      `${done}/${layers.size} layers` + (total ? `, ${formatBytes(current)} of ${formatBytes(total)}` : '')
    );
  };
  const step = (text: string) =>
    progress({ image, kind: 'pull', phase: 'step', line: `[pull] ${image}: ${text}` });
  const onEvent = (event: PullEvent) => {
    const status = event.status?.trim();
    if (!status) return;
    if (!event.id || /^Pulling from\b/.test(status) || !/^[0-9a-f]{6,}$/.test(event.id)) {
      // Not a layer's: "Pulling from library/node", "Digest: …", "Status: Downloaded newer image …".
      step(status);
      return;
    }
    let layer = layers.get(event.id);
    const fresh = !layer;
    layer ??= { status: '', current: 0, total: 0, tenth: -1 };
    layers.set(event.id, layer);
    const d = event.progressDetail;
    const moving = /^(Downloading|Extracting)$/.test(status);
    if (moving && d && typeof d.total === 'number' && d.total > 0) {
      if (status === 'Downloading') {
        layer.total = d.total;
        layer.current = Math.min(d.current ?? 0, d.total);
      }
      const tenth = Math.floor(((d.current ?? 0) / d.total) * 10);
      if (!fresh && status === layer.status && tenth === layer.tenth) return;
      layer.tenth = tenth;
    } else if (/^(Download complete|Pull complete|Already exists)$/.test(status) && layer.total) {
      layer.current = layer.total;
    }
    if (!moving) layer.tenth = -1;
    const changed = fresh || status !== layer.status || moving;
    layer.status = status;
    if (!changed) return;
    const detail = moving && d?.total ? ` ${formatBytes(d.current ?? 0)}/${formatBytes(d.total)}` : '';
    step(`layer ${event.id.slice(0, 12)} ${status}${detail} (${totals()})`);
  };
  let stream: NodeJS.ReadableStream;
  try {
    stream = (await docker.pull(image)) as NodeJS.ReadableStream;
  } catch (e) {
    throw pullFailure(image, e);
  }
  await new Promise<void>((resolve, reject) => {
    let failed: string | undefined;
    docker.modem.followProgress(
      stream,
      (err: Error | null) => {
        const why = failed ?? err?.message;
        if (why === undefined) resolve();
        else reject(pullFailure(image, { message: why }));
      },
      (event: PullEvent) => {
        if (event.error) failed ??= event.errorDetail?.message ?? event.error;
        else onEvent(event);
      },
    );
  });
  if (!(await hasImage(docker, image)))
    throw new PullError(
      'image_missing',
      `the pull of ${image} ended but the engine does not have it`,
      `pull it by hand to see why (docker pull ${image}), or load it: docker load -i FILE.tar`,
    );
  const durationMs = performance.now() - started;
  progress({
    image,
    kind: 'pull',
    phase: 'pulled',
    line: `[pull] ${image}: pulled in ${Math.round(durationMs)} ms (${totals()})`,
  });
  return { image, pulled: true, durationMs };
}

/** Whether the engine has `image`; its other failures worded as this module's error. */
function hasImage(docker: Docker, image: string): Promise<boolean> {
  return imageExists(docker, image, (e) => pullFailure(image, e));
}

/** A pull's failure as a {@link PullError}: the engine gone, no registry, or no such image. */
function pullFailure(image: string, e: unknown): PullError {
  const err = e as { code?: string; message?: string; json?: { message?: string } };
  if (err?.code === 'ENOENT' || err?.code === 'ECONNREFUSED' || err?.code === 'EACCES')
    return new PullError(
      'docker_unreachable',
      `Docker is unreachable while looking for the image ${image} (${err.message ?? String(e)})`,
      'start the engine (npx stepbox doctor checks it)',
    );
  const why = (err?.json?.message ?? err?.message ?? String(e)).trim();
  const load = `load it from a file (docker save ${image} -o image.tar on a machine that has it, then docker load -i image.tar here), or build it: name a Dockerfile in the task's sandbox.build`;
  if (UNREACHABLE.test(why))
    return new PullError(
      'image_missing',
      `the image ${image} is not in the Docker engine, and the engine cannot pull it: no image registry is reachable from it (${why})`,
      load,
    );
  if (NOT_THERE.test(why))
    return new PullError(
      'image_missing',
      `the image ${image} is not in the Docker engine, and its registry has no such image for us (${why}): check the name and tag`,
      `fix the name (sandbox.image), log in to a private registry (docker login), or ${load}`,
    );
  return new PullError('image_missing', `the image ${image} could not be pulled: ${why}`, load);
}
