import Docker from 'dockerode';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { SandboxFailure } from '../sandbox/sandbox.js';
import { readTar, TarError, type TarEntry } from './tar-reader.js';
import { CATATONIT_FIX, detectEngine, needsContainerInit, type EngineInfo } from './engine-kind.js';

/** Who and where a `docker exec` runs. */
export interface ExecOptions {
  /** `uid:gid` or a user name; the container's user by default. */
  readonly user?: string;
  readonly workingDir?: string;
  /** `NAME=value` entries added to (and overriding) the container's environment. */
  readonly env?: readonly string[];
}

/** The streams of an attached `docker exec`: stdin to write, stdout/stderr demultiplexed. */
export interface ExecStreams {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Closes the connection (the process inside sees EOF on stdin). */
  close(): void;
  /** The process's exit code from the engine (`docker exec inspect`); null while it runs. */
  exitCode(): Promise<number | null>;
}

/** A container stepbox knows about, from a label-filtered listing. */
export interface LabelledContainer {
  readonly id: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly state: string;
  /** Its names, without Docker's leading `/`. */
  readonly names: readonly string[];
}

/** Container creation options, as the Docker Engine API takes them. */
export type ContainerSpec = Docker.ContainerCreateOptions;

interface DockerApiError {
  statusCode?: number;
  code?: string;
  message?: string;
}

const FIX_DAEMON =
  'start the Docker engine (e.g. `sudo systemctl start docker` or `dockerd --bridge=none --iptables=false &`), ' +
  'or point DOCKER_HOST at a running one; `stepbox doctor` checks it';

/** Maps a dockerode error to the {@link SandboxFailure} a caller can act on. */
export function dockerFailure(e: unknown, doing: string): SandboxFailure {
  const err = e as DockerApiError;
  const text = err?.message ?? String(e);
  if (
    err?.code === 'ENOENT' ||
    err?.code === 'ECONNREFUSED' ||
    err?.code === 'EACCES' ||
    err?.code === 'ENOTFOUND'
  )
    return new SandboxFailure(
      'docker_unreachable',
      `Docker is unreachable while ${doing} (${text}); ${FIX_DAEMON}`,
    );
  // Docker checks the CPU limit against the engine's CPUs only when it makes the container:
  // a task's limit, not the machine, so it is the task's error (exit 2), naming the key.
  if (/Range of CPUs is from/i.test(text))
    return new SandboxFailure(
      'invalid_task',
      `the task asks for more CPUs than the engine has (sandbox.limits.cpus; a Harbor task's [environment] cpus): ${text.trim()}; lower it to at most the engine's CPU count (docker info shows it)`,
    );
  if (needsContainerInit(text))
    return new SandboxFailure('sandbox_failed', `the engine failed while ${doing}: ${text}`, CATATONIT_FIX);
  return new SandboxFailure('sandbox_failed', `Docker failed while ${doing}: ${text}`);
}

/**
 * Starts an exec with stdin attached (a hijacked connection). docker-modem keeps such a
 * request's body open for stdin, so when the engine answers with an error instead of the
 * upgrade (409: the container stopped between the exec's creation and its start) the
 * rejected start leaves its unix-socket connection open for good, and that handle keeps
 * a finished CLI process alive. Aborting the request on failure closes it.
 */
export async function startAttached(
  exec: Docker.Exec,
  options: Pick<Docker.ExecStartOptions, 'Tty'>,
): Promise<NodeJS.ReadWriteStream> {
  const abort = new AbortController();
  try {
    return (await exec.start({
      ...options,
      hijack: true,
      stdin: true,
      abortSignal: abort.signal,
    })) as unknown as NodeJS.ReadWriteStream;
  } catch (e) {
    abort.abort();
    throw e;
  }
}

/**
 * The one object that talks to the Docker engine (dockerode). The connection comes from
 * DOCKER_HOST (tcp/ssh/unix) or the local socket; nothing here assumes the engine shares
 * this machine's /proc or filesystem.
 */
export class DockerEngine {
  private detected: Promise<EngineInfo> | undefined;

  constructor(readonly docker: Docker = new Docker()) {}

  /** What the engine is (Docker or Podman, rootless, cgroup version), asked once per connection. */
  info(): Promise<EngineInfo> {
    this.detected ??= detectEngine(this.docker).catch((e: unknown) => {
      this.detected = undefined; // the next call asks again
      throw dockerFailure(e, 'asking the engine for its version');
    });
    return this.detected;
  }

  /** Resolves when the engine answers; rejects with `docker_unreachable` otherwise. */
  async ping(): Promise<void> {
    try {
      await this.docker.ping();
    } catch (e) {
      throw new SandboxFailure(
        'docker_unreachable',
        `Docker does not answer (${(e as Error).message}); ${FIX_DAEMON}`,
      );
    }
  }

  /** Whether the engine has `image` locally. */
  hasImage(image: string): Promise<boolean> {
    return imageExists(this.docker, image, (e) => dockerFailure(e, `inspecting image ${image}`));
  }

  /**
   * What stepbox needs of an image's configuration: its id (content) and its WORKDIR; null
   * when the engine does not have it.
   */
  async imageConfig(image: string): Promise<{ id: string; workingDir: string } | null> {
    try {
      const info = await this.docker.getImage(image).inspect();
      return { id: info.Id, workingDir: info.Config?.WorkingDir ?? '' };
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return null;
      throw dockerFailure(e, `inspecting image ${image}`);
    }
  }

  /**
   * The image's own files under `path`, as a tar archive read whole (at most `maxBytes` of
   * content): through a container of `image` that is created (never started, no network),
   * whose filesystem is the image's layers, then removed. A tmpfs mounted there in a running
   * sandbox hides them, and `getArchive` never sees a tmpfs. Empty when the path does not
   * exist in the image. Works the same on a remote engine (the archive comes over the API).
   */
  async readImagePath(
    image: string,
    path: string,
    labels: Record<string, string>,
    maxBytes: number,
  ): Promise<TarEntry[]> {
    let container: Docker.Container | undefined;
    try {
      container = await this.docker.createContainer({
        Image: image,
        // Never started: any command will do, and an image without one needs one to be created.
        Entrypoint: ['/stepbox-never-started'],
        Cmd: [],
        Labels: labels,
        NetworkDisabled: true,
        HostConfig: { NetworkMode: 'none' },
      });
      let archive: NodeJS.ReadableStream;
      try {
        archive = await container.getArchive({ path });
      } catch (e) {
        if ((e as DockerApiError).statusCode === 404) return [];
        throw e;
      }
      return await readTar(archive as AsyncIterable<Buffer>, maxBytes);
    } catch (e) {
      if (e instanceof TarError)
        throw new SandboxFailure('sandbox_failed', `reading ${path} of image ${image}: ${e.message}`);
      if ((e as DockerApiError).statusCode === 404)
        throw new SandboxFailure(
          'image_missing',
          `the image ${image} is not in the Docker engine; build it or pull it first (docker pull ${image})`,
        );
      throw dockerFailure(e, `reading ${path} of image ${image}`);
    } finally {
      if (container) await this.remove(container.id).catch(() => undefined);
    }
  }

  /** Whether the engine has a network called `name`. */
  async hasNetwork(name: string): Promise<boolean> {
    try {
      await this.docker.getNetwork(name).inspect();
      return true;
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return false;
      throw dockerFailure(e, `inspecting network ${name}`);
    }
  }

  /** Whether the engine has a volume called `name`. */
  async hasVolume(name: string): Promise<boolean> {
    try {
      await this.docker.getVolume(name).inspect();
      return true;
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return false;
      throw dockerFailure(e, `inspecting volume ${name}`);
    }
  }

  /** Volumes carrying every label of `labels`, each with the ids of the containers (any state) that mount it. */
  async volumesByLabel(
    labels: readonly string[],
  ): Promise<{ name: string; labels: Record<string, string>; users: string[] }[]> {
    try {
      const [{ Volumes }, containers] = await Promise.all([
        this.docker.listVolumes({ filters: { label: [...labels] } }),
        this.docker.listContainers({ all: true }),
      ]);
      return (Volumes ?? []).map((v) => ({
        name: v.Name,
        labels: v.Labels ?? {},
        users: containers.filter((c) => (c.Mounts ?? []).some((m) => m.Name === v.Name)).map((c) => c.Id),
      }));
    } catch (e) {
      throw dockerFailure(e, 'listing volumes');
    }
  }

  /** Creates volume `name` with `labels` (an existing one of that name is kept as it is). */
  async createVolume(name: string, labels: Record<string, string>): Promise<void> {
    try {
      await this.docker.createVolume({ Name: name, Labels: labels });
    } catch (e) {
      throw dockerFailure(e, `creating volume ${name}`);
    }
  }

  /** Removes a volume (gone already is fine). */
  async removeVolume(name: string): Promise<void> {
    try {
      await this.docker.getVolume(name).remove({ force: true });
    } catch (e) {
      if ((e as DockerApiError).statusCode !== 404) throw dockerFailure(e, `removing volume ${name}`);
    }
  }

  /**
   * Creates volume `name` and fills it from a tar stream: through a container of `image`
   * that is created (never started, no network) with the volume mounted, then removed.
   * Works the same on a remote engine (the archive goes over the API).
   */
  async fillVolume(
    name: string,
    image: string,
    labels: Record<string, string>,
    tar: NodeJS.ReadableStream,
    /** A command run (as root, no network) in the filled volume after the copy, which must exit 0. */
    finish?: readonly string[],
  ): Promise<void> {
    let container: Docker.Container | undefined;
    try {
      await this.docker.createVolume({ Name: name, Labels: labels });
      container = await this.docker.createContainer({
        Image: image,
        Cmd: finish ? [...finish] : ['true'],
        User: '0:0',
        Labels: labels,
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'volume', Source: name, Target: '/opt/agent', ReadOnly: false }],
        },
      });
      await container.putArchive(tar, { path: '/opt/agent' });
      if (finish) {
        await container.start();
        const done = (await container.wait()) as { StatusCode?: number };
        if (done.StatusCode !== 0) throw new Error(`the finishing command exited ${String(done.StatusCode)}`);
      }
    } catch (e) {
      await this.removeVolume(name).catch(() => undefined);
      throw dockerFailure(e, `filling volume ${name}`);
    } finally {
      if (container) await this.remove(container.id).catch(() => undefined);
    }
  }

  /**
   * Whether volume `name` holds `path` (relative to the volume's root), asked through a
   * container of `image` that is created (never started) with the volume mounted read-only,
   * then removed: the engine's archive API sees volumes, so this works on a remote engine.
   */
  async volumeHasFile(
    name: string,
    image: string,
    path: string,
    labels: Record<string, string>,
  ): Promise<boolean> {
    let container: Docker.Container | undefined;
    try {
      container = await this.docker.createContainer({
        Image: image,
        Cmd: ['true'],
        Labels: labels,
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'volume', Source: name, Target: '/stepbox-volume', ReadOnly: true }],
        },
      });
      // A HEAD answered as a stream (docker-modem): left unread, its socket would stay open.
      const head = (await container.infoArchive({ path: `/stepbox-volume/${path}` })) as unknown as {
        destroy?: () => void;
      };
      head.destroy?.();
      return true;
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) {
        if (container) return false;
        throw new SandboxFailure(
          'image_missing',
          `the image ${image} is not in the Docker engine; pull or build it (\`docker pull ${image}\`; the stepbox image: \`npx stepbox image build\`)`,
        );
      }
      throw dockerFailure(e, `looking into volume ${name}`);
    } finally {
      if (container) await this.remove(container.id).catch(() => undefined);
    }
  }

  /**
   * Runs a container of `spec` to its end (a setup job, not a sandbox) and removes it;
   * resolves with its exit code and the last 4 KiB of its output. Rejects after `timeoutMs`.
   */
  async runToEnd(spec: ContainerSpec, timeoutMs: number): Promise<{ exitCode: number; output: string }> {
    let container: Docker.Container | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      container = await this.docker.createContainer(spec);
      await container.start();
      const c = container;
      const waited = (await Promise.race([
        c.wait(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`it did not end within ${timeoutMs} ms`)), timeoutMs);
        }),
      ])) as { StatusCode: number };
      // An engine whose default log driver keeps nothing has no logs to give: the exit code decides.
      const logs = ((await c.logs({ stdout: true, stderr: true, follow: false }).catch(() => null)) ??
        Buffer.alloc(0)) as unknown as Buffer;
      // Without a TTY the log is multiplexed: 8-byte frame heads before each chunk.
      const parts: Buffer[] = [];
      for (let at = 0; at + 8 <= logs.length;) {
        const n = logs.readUInt32BE(at + 4);
        parts.push(logs.subarray(at + 8, at + 8 + n));
        at += 8 + n;
      }
      return { exitCode: waited.StatusCode, output: Buffer.concat(parts).toString('utf8').slice(-4096) };
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404 && !container)
        throw new SandboxFailure(
          'image_missing',
          `the image ${spec.Image} is not in the Docker engine; build it with \`stepbox image build\``,
        );
      throw dockerFailure(e, `running a setup container of ${spec.Image}`);
    } finally {
      clearTimeout(timer);
      if (container) await this.remove(container.id).catch(() => undefined);
    }
  }

  /** The platform an image was built for (`linux`/`amd64`), or null when the engine does not have it. */
  async imagePlatform(image: string): Promise<{ os: string; architecture: string } | null> {
    try {
      const info = await this.docker.getImage(image).inspect();
      return { os: info.Os, architecture: info.Architecture };
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return null;
      throw dockerFailure(e, `inspecting image ${image}`);
    }
  }

  /** Creates and starts a container; returns its id. A failed start removes what was created. */
  async createAndStart(spec: ContainerSpec): Promise<string> {
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer(spec);
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404)
        throw new SandboxFailure(
          'image_missing',
          `the sandbox image ${spec.Image} is not in the Docker engine; build it with \`stepbox image build\``,
        );
      throw dockerFailure(e, 'creating a sandbox container');
    }
    try {
      await container.start();
    } catch (e) {
      await this.remove(container.id).catch(() => undefined);
      throw dockerFailure(e, `starting sandbox container ${container.id.slice(0, 12)}`);
    }
    return container.id;
  }

  /**
   * Starts `cmd` in a running container with stdin attached (one `docker exec`), as the
   * container's user unless `options.user` says otherwise; `exitCode()` asks the engine for
   * the process's exit code once its streams ended (null while it runs).
   */
  async exec(id: string, cmd: string[], options: ExecOptions = {}): Promise<ExecStreams> {
    let stream: NodeJS.ReadWriteStream;
    let exec: Docker.Exec;
    try {
      exec = await this.docker.getContainer(id).exec({
        Cmd: cmd,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        ...(options.user ? { User: options.user } : {}),
        ...(options.workingDir ? { WorkingDir: options.workingDir } : {}),
        ...(options.env ? { Env: [...options.env] } : {}),
      });
      stream = await startAttached(exec, {});
    } catch (e) {
      const status = (e as DockerApiError).statusCode;
      if (
        status === 404 ||
        status === 409 ||
        /is not running|stopped|restarting/i.test((e as Error).message ?? '')
      )
        throw new SandboxFailure('sandbox_lost', `sandbox container ${id.slice(0, 12)} is gone or stopped`);
      throw dockerFailure(e, `starting a process in sandbox ${id.slice(0, 12)}`);
    }
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    this.docker.modem.demuxStream(stream, stdout, stderr);
    const end = () => {
      stdout.end();
      stderr.end();
    };
    stream.on('end', end);
    stream.on('close', end);
    stream.on('error', end);
    const duplex = stream as unknown as Writable & { destroy(): void };
    return {
      stdin: duplex,
      stdout,
      stderr,
      close: () => duplex.destroy(),
      exitCode: async () => {
        const info = await exec.inspect();
        return info.Running ? null : (info.ExitCode ?? null);
      },
    };
  }

  /**
   * Runs `cmd` in a running container to its end (one exec, no stdin) and resolves with its
   * exit code and its output (stdout and stderr together, the last 4 KiB). For setup steps
   * before the helper starts; `privileged` gives that one exec every capability.
   */
  async execOnce(
    id: string,
    cmd: string[],
    options: ExecOptions & { readonly privileged?: boolean } = {},
  ): Promise<{ exitCode: number; output: string }> {
    try {
      const exec = await this.docker.getContainer(id).exec({
        Cmd: cmd,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Privileged: options.privileged === true,
        ...(options.user ? { User: options.user } : {}),
        ...(options.workingDir ? { WorkingDir: options.workingDir } : {}),
        ...(options.env ? { Env: [...options.env] } : {}),
      });
      const stream = await exec.start({ hijack: true, stdin: false });
      let output = '';
      const sink = new PassThrough();
      sink.on('data', (c: Buffer) => {
        output = (output + c.toString('utf8')).slice(-4096);
      });
      this.docker.modem.demuxStream(stream, sink, sink);
      await new Promise<void>((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', reject);
      });
      const info = await exec.inspect();
      return { exitCode: info.ExitCode ?? -1, output };
    } catch (e) {
      throw dockerFailure(e, `running ${cmd[0]} in sandbox ${id.slice(0, 12)}`);
    }
  }

  /** Whether the container exists and is running. */
  async isRunning(id: string): Promise<boolean> {
    try {
      const info = await this.docker.getContainer(id).inspect();
      return info.State.Running === true;
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return false;
      throw dockerFailure(e, `inspecting sandbox ${id.slice(0, 12)}`);
    }
  }

  /** The exit code of a container that has stopped; null while it runs or when it is gone. */
  async exitCodeOf(id: string): Promise<number | null> {
    try {
      const info = await this.docker.getContainer(id).inspect();
      return info.State.Running ? null : info.State.ExitCode;
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return null;
      throw dockerFailure(e, `inspecting sandbox ${id.slice(0, 12)}`);
    }
  }

  /** Whether a stopped container was stopped by the engine's OOM killer (false when it is gone or was not). */
  async stoppedByOom(id: string): Promise<boolean> {
    try {
      const info = await this.docker.getContainer(id).inspect();
      return info.State.Running !== true && info.State.OOMKilled === true;
    } catch {
      return false;
    }
  }

  /** The container's current name (without Docker's leading `/`), or null when it is gone. */
  async nameOf(id: string): Promise<string | null> {
    try {
      const info = await this.docker.getContainer(id).inspect();
      return info.Name.replace(/^\//, '');
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404) return null;
      throw dockerFailure(e, `inspecting sandbox ${id.slice(0, 12)}`);
    }
  }

  /** Removes a container by force; one that is already gone counts as removed. */
  async remove(id: string): Promise<void> {
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch (e) {
      const status = (e as DockerApiError).statusCode;
      // 404: already gone. 409 "removal already in progress": someone else is removing it.
      if (status === 404 || (status === 409 && /already in progress/i.test((e as Error).message))) return;
      throw dockerFailure(e, `removing sandbox ${id.slice(0, 12)}`);
    }
  }

  /** Renames a container (names are the one thing Docker lets us change after creation; labels are fixed). */
  async rename(id: string, name: string): Promise<void> {
    try {
      await this.docker.getContainer(id).rename({ name });
    } catch (e) {
      if ((e as DockerApiError).statusCode === 404)
        throw new SandboxFailure('sandbox_lost', `sandbox container ${id.slice(0, 12)} is gone`);
      throw dockerFailure(e, `renaming sandbox ${id.slice(0, 12)}`);
    }
  }

  /** Every container (running or not) carrying `label` (`key` or `key=value`). */
  async listByLabel(label: string): Promise<LabelledContainer[]> {
    try {
      const list = await this.docker.listContainers({ all: true, filters: { label: [label] } });
      return list.map((c) => ({
        id: c.Id,
        labels: c.Labels ?? {},
        state: c.State,
        names: (c.Names ?? []).map((n) => n.replace(/^\//, '')),
      }));
    } catch (e) {
      throw dockerFailure(e, 'listing sandbox containers');
    }
  }
}

/**
 * The engine at a unix socket other than the environment's (DOCKER_HOST): a second engine
 * beside the main one, such as the bench's gVisor engine (.ci/gvisor.sh).
 */
export function engineAtSocket(socketPath: string): DockerEngine {
  return new DockerEngine(new Docker({ socketPath }));
}

/**
 * Whether the engine behind `docker` has `image` locally (a 404 is "no"); any other failure is
 * thrown as `failure` words it, so a build and a pull each name the fix in their own terms.
 */
export async function imageExists(
  docker: Docker,
  image: string,
  failure: (e: unknown) => Error,
): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (e) {
    if ((e as DockerApiError).statusCode === 404) return false;
    throw failure(e);
  }
}
