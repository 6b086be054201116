import Docker from 'dockerode';

/** How long a reachability check waits for the engine before calling it unreachable. */
export const DOCKER_PING_TIMEOUT_MS = 3_000;

/** Whether the engine answered, and if not, why and what fixes it. */
export interface DockerReachability {
  readonly ok: boolean;
  /** Where stepbox looked and what it found (engine version, or the error). */
  readonly detail: string;
  /** What to do about it; empty when ok. */
  readonly fix: string;
}

/** Where stepbox connects: `DOCKER_HOST`, or the local socket. */
export function dockerEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env.DOCKER_HOST ||
    (process.platform === 'win32' ? 'npipe:////./pipe/docker_engine' : 'unix:///var/run/docker.sock')
  );
}

/** The fix for an unreachable engine, tailored to the endpoint and the error code. */
export function dockerFix(env: NodeJS.ProcessEnv = process.env, code?: string): string {
  if (code === 'EACCES')
    return 'let your user reach the socket: sudo usermod -aG docker $USER, then log in again (or run stepbox with sudo)';
  const start =
    process.platform === 'linux'
      ? 'start the daemon: sudo systemctl start docker (without systemd: sudo dockerd --bridge=none --iptables=false &)'
      : 'start Docker Desktop';
  const host = env.DOCKER_HOST;
  if (host && !host.startsWith('unix://'))
    return `start the engine at DOCKER_HOST=${host}, or unset DOCKER_HOST to use the local socket`;
  if (host) return `${start} so that it listens on ${host}, or unset DOCKER_HOST to use the default socket`;
  return `${start}, or set DOCKER_HOST=tcp://HOST:2375 to a reachable engine`;
}

/** Pings the engine with a bound, so a stopped daemon or a black-holed host fails fast. */
export async function dockerReachable(
  docker: Docker,
  timeoutMs = DOCKER_PING_TIMEOUT_MS,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DockerReachability> {
  const where = dockerEndpoint(env);
  try {
    // dockerode honours abortSignal on these calls; its typings do not list it.
    const bounded = { abortSignal: AbortSignal.timeout(timeoutMs) } as object;
    await (docker.ping as (opts: object) => Promise<unknown>).call(docker, bounded);
    const version = await (docker.version as (opts: object) => Promise<Docker.DockerVersion>).call(docker, {
      abortSignal: AbortSignal.timeout(timeoutMs),
    });
    return { ok: true, detail: `Docker ${version.Version} (API ${version.ApiVersion}) at ${where}`, fix: '' };
  } catch (e) {
    const err = e as { code?: string; name?: string; message?: string };
    const why =
      err.name === 'AbortError' || err.name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : err.code === 'ECONNREFUSED'
          ? 'connection refused (ECONNREFUSED)'
          : err.code === 'ENOENT'
            ? 'no socket there (ENOENT)'
            : err.code === 'EACCES'
              ? 'permission denied on the socket (EACCES)'
              : (err.code ?? err.message ?? String(e));
    return { ok: false, detail: `Docker is unreachable at ${where}: ${why}`, fix: dockerFix(env, err.code) };
  }
}

/** A client for the engine in the environment (DOCKER_HOST or the local socket). */
export function dockerClient(): Docker {
  return new Docker();
}
