import type { DockerEngine } from './client.js';
import { describeRuntimes, detectEngine, engineName, type EngineInfo } from './engine-kind.js';

/** How long a reachability check waits for the engine before calling it unreachable. */
export const DOCKER_PING_TIMEOUT_MS = 3_000;

/** Whether the engine answered, and if not, why and what fixes it. */
export interface DockerReachability {
  readonly ok: boolean;
  /** What is wrong in a person's words (`Docker is not running`), the errno left to `detail`; empty when ok. */
  readonly headline?: string;
  /** Where stepbox looked and what it found (engine version, or the error). */
  readonly detail: string;
  /** What to do about it; empty when ok. */
  readonly fix: string;
  /** What the engine is, when it answered. */
  readonly engine?: EngineInfo;
}

/**
 * How long the engine may take to say what it is once it answered a ping. Podman's `/info`
 * and `/version` run its OCI runtime and conmon to report their versions: 5–10 s on a
 * loaded 2-core host, so the ping's 3 s bound would call a working engine unreachable.
 */
export const ENGINE_INFO_TIMEOUT_MS = 20_000;

/** Whether DOCKER_HOST names a Podman socket (`…/podman.sock`, `…/podman/…`). */
export function looksLikePodman(env: NodeJS.ProcessEnv = process.env): boolean {
  return /podman/i.test(env.DOCKER_HOST ?? '');
}

/** Podman's own ways to start its Docker-compatible API, for a fix line. */
export const PODMAN_FIX =
  "start Podman's API: rootless `systemctl --user enable --now podman.socket` with DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock, " +
  'or rootful `sudo systemctl enable --now podman.socket` with DOCKER_HOST=unix:///run/podman/podman.sock ' +
  '(without systemd: `podman system service --time=0 unix:///PATH/podman.sock &`)';

/** Where stepbox connects: `DOCKER_HOST`, or the local socket. */
export function dockerEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env.DOCKER_HOST ||
    (process.platform === 'win32' ? 'npipe:////./pipe/docker_engine' : 'unix:///var/run/docker.sock')
  );
}

/** The fix for an unreachable engine, tailored to the endpoint and the error code. */
export function dockerFix(env: NodeJS.ProcessEnv = process.env, code?: string): string {
  if (looksLikePodman(env))
    return code === 'EACCES'
      ? `the Podman socket at ${env.DOCKER_HOST} is another user's: use your own (rootless, unix://$XDG_RUNTIME_DIR/podman/podman.sock) or run stepbox with sudo for the rootful one`
      : `${PODMAN_FIX}; or unset DOCKER_HOST to use Docker's socket`;
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
  return `${start}, or set DOCKER_HOST=tcp://HOST:2375 to a reachable engine (with Podman: ${PODMAN_FIX})`;
}

/** Pings the engine with a bound, so a stopped daemon or a black-holed host fails fast. */
export async function dockerReachable(
  engine: DockerEngine,
  timeoutMs = DOCKER_PING_TIMEOUT_MS,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DockerReachability> {
  const where = dockerEndpoint(env);
  const docker = engine.docker;
  try {
    // dockerode honours abortSignal on these calls; its typings do not list it.
    const bounded = { abortSignal: AbortSignal.timeout(timeoutMs) } as object;
    await (docker.ping as (opts: object) => Promise<unknown>).call(docker, bounded);
  } catch (e) {
    return unreachable(e, where, timeoutMs, env);
  }
  try {
    const engine = await detectEngine(docker, Math.max(timeoutMs, ENGINE_INFO_TIMEOUT_MS));
    return { ok: true, detail: `${describeEngine(engine)} at ${where}`, fix: '', engine };
  } catch (e) {
    return unreachable(e, where, Math.max(timeoutMs, ENGINE_INFO_TIMEOUT_MS), env, '/version');
  }
}

/** `Podman 4.3.1 (API 1.41, rootless, cgroup v2)`: what the engine said about itself. */
export function describeEngine(engine: EngineInfo): string {
  const facts = [
    `API ${engine.apiVersion}`,
    ...(engine.rootless === null ? [] : [engine.rootless ? 'rootless' : 'rootful']),
    ...(engine.cgroupVersion === null ? [] : [`cgroup v${engine.cgroupVersion}`]),
    // Which runtimes a task's sandbox.runtime (or --runtime) may name here, e.g. runsc.
    ...(engine.runtimes ? [`runtimes ${describeRuntimes(engine.runtimes)}`] : []),
  ];
  return `${engineName(engine.kind)} ${engine.version} (${facts.join(', ')})`;
}

/** What a person is told first when the engine did not answer; the errno stays in the detail. */
function unreachableHeadline(what: string, err: { code?: string; name?: string }, asked?: string): string {
  if (asked) return `${what} answered but is not working`;
  if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') return `${what} is not running`;
  if (err.code === 'EACCES') return `${what} is running but its socket is not open to you`;
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return `${what} is not answering`;
  return `${what} cannot be reached`;
}

/** The verdict for an engine that did not answer (`asked`: the request after a ping that did). */
function unreachable(
  e: unknown,
  where: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  asked?: string,
): DockerReachability {
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
  const what = looksLikePodman(env) ? 'Podman' : 'Docker';
  return {
    ok: false,
    headline: unreachableHeadline(what, err, asked),
    detail: asked
      ? `the engine at ${where} answered a ping but not ${asked}: ${why}`
      : `${what} is unreachable at ${where}: ${why}`,
    fix: dockerFix(env, err.code),
  };
}
