import type Docker from 'dockerode';

/** Which engine answers the Docker API: Docker itself, or Podman's `podman system service`. */
export type EngineKind = 'docker' | 'podman';

/** What stepbox needs to know about the engine before it starts a sandbox there. */
export interface EngineInfo {
  readonly kind: EngineKind;
  /** The engine's own version (`4.3.1` for Podman, `24.0.5` for Docker). */
  readonly version: string;
  /** The API version it reports: Docker's, or libpod's on Podman. */
  readonly apiVersion: string;
  /** Whether the engine runs without root (its containers live in a user namespace); null when it does not say. */
  readonly rootless: boolean | null;
  /** The host's cgroup version, `1` or `2`; null when the engine does not say. */
  readonly cgroupVersion: 1 | 2 | null;
  /** The container runtimes the engine offers (`sandbox.runtime`); absent when it does not say. */
  readonly runtimes?: EngineRuntimes;
}

/** The OCI runtimes an engine offers by name (Docker's `/info` Runtimes), and the one it uses by default. */
export interface EngineRuntimes {
  readonly names: readonly string[];
  readonly default: string | null;
}

/** The part of `GET /version` that names the engine. */
export interface VersionAnswer {
  readonly Version?: string;
  readonly ApiVersion?: string;
  readonly Components?: readonly { readonly Name?: string; readonly Version?: string }[];
}

/** The engine behind a `/version` answer: Podman names itself in `Components[].Name` ("Podman Engine"). */
export function engineKindOf(version: VersionAnswer): EngineKind {
  return (version.Components ?? []).some((c) => /podman/i.test(c.Name ?? '')) ? 'podman' : 'docker';
}

/** The engine's name for people: `Docker` or `Podman`. */
export function engineName(kind: EngineKind): string {
  return kind === 'podman' ? 'Podman' : 'Docker';
}

/** `1` or `2` from `v1`, `1`, `"2"`…; null for anything else. */
function cgroupVersionOf(value: unknown): 1 | 2 | null {
  const m = /^v?([12])$/.exec(String(value ?? ''));
  return m ? (Number(m[1]) as 1 | 2) : null;
}

/** The part of libpod's `GET /libpod/info` stepbox reads. */
export interface LibpodInfoAnswer {
  readonly host?: {
    readonly cgroupVersion?: string;
    readonly ociRuntime?: { readonly name?: string };
    readonly security?: { readonly rootless?: boolean };
  };
}

/** The part of Docker's `GET /info` stepbox reads. */
export interface DockerInfoAnswer {
  readonly CgroupVersion?: string;
  readonly SecurityOptions?: readonly string[];
  readonly Runtimes?: Readonly<Record<string, unknown>>;
  readonly DefaultRuntime?: string;
}

/**
 * The runtimes an engine's `/info` names: Docker lists every runtime it was given
 * (`--add-runtime`, daemon.json `runtimes`) with its default; libpod's `/info` names only
 * the runtime Podman uses (others in containers.conf are not listed, so the list is left out
 * and the engine itself judges a name). Containerd's internal shim names
 * (`io.containerd.*`) are not runtimes a task would name and are left out.
 */
export function runtimesOf(
  kind: EngineKind,
  info: LibpodInfoAnswer | DockerInfoAnswer | null,
): EngineRuntimes | undefined {
  if (!info) return undefined;
  if (kind === 'podman') {
    const name = (info as LibpodInfoAnswer).host?.ociRuntime?.name;
    return typeof name === 'string' && name ? { names: [], default: name } : undefined;
  }
  const d = info as DockerInfoAnswer;
  if (!d.Runtimes || typeof d.Runtimes !== 'object') return undefined;
  const names = Object.keys(d.Runtimes)
    .filter((n) => !n.startsWith('io.containerd.'))
    .sort();
  return { names, default: typeof d.DefaultRuntime === 'string' ? d.DefaultRuntime : null };
}

/** `runc (default), runsc`: the runtimes an engine offers, for people. */
export function describeRuntimes(runtimes: EngineRuntimes): string {
  const names = runtimes.names.length ? runtimes.names : runtimes.default ? [runtimes.default] : [];
  return names.map((n) => (n === runtimes.default ? `${n} (default)` : n)).join(', ');
}

/** Rootless and cgroup version from libpod's `/info` (Podman) or Docker's `/info`. */
export function hostFacts(
  kind: EngineKind,
  info: LibpodInfoAnswer | DockerInfoAnswer | null,
): Pick<EngineInfo, 'rootless' | 'cgroupVersion'> {
  if (!info) return { rootless: null, cgroupVersion: null };
  if (kind === 'podman') {
    const host = (info as LibpodInfoAnswer).host;
    const rootless = host?.security?.rootless;
    return {
      rootless: typeof rootless === 'boolean' ? rootless : null,
      cgroupVersion: cgroupVersionOf(host?.cgroupVersion),
    };
  }
  const d = info as DockerInfoAnswer;
  return {
    rootless: Array.isArray(d.SecurityOptions)
      ? d.SecurityOptions.some((o) => /name=rootless/.test(o))
      : null,
    cgroupVersion: cgroupVersionOf(d.CgroupVersion),
  };
}

/**
 * Why the engine would not hold a sandbox's limits, or null when it would. A rootless engine
 * on cgroup v1 cannot delegate the memory and pids controllers to an unprivileged user: the
 * container starts, its API reports the limits as set, and a fork loop or a big allocation
 * runs past them (seen on rootless Podman: 1,000 processes under a pids limit of 256).
 */
export function limitsProblem(info: EngineInfo): string | null {
  if (info.rootless === true && info.cgroupVersion === 1)
    return `${engineName(info.kind)} runs rootless on a cgroup v1 host, where the sandbox's memory, pids and CPU limits are not enforced (the engine reports them as set, but nothing holds them)`;
  return null;
}

/** The option that lets sandboxes start where {@link limitsProblem} says their limits would not hold. */
export const ALLOW_UNENFORCED_LIMITS_ENV = 'STEPBOX_ALLOW_UNENFORCED_LIMITS';

/** Whether the user explicitly allowed sandboxes whose limits would not hold (`STEPBOX_ALLOW_UNENFORCED_LIMITS=1`). */
export function unenforcedLimitsAllowed(env: NodeJS.ProcessEnv): boolean {
  return env[ALLOW_UNENFORCED_LIMITS_ENV] === '1';
}

/** The fix for {@link limitsProblem}, for a message. */
export function limitsFix(kind: EngineKind): string {
  const engine =
    kind === 'podman'
      ? 'run Podman rootful (`sudo podman system service --time=0 unix:///run/podman/podman.sock &`, DOCKER_HOST=unix:///run/podman/podman.sock) or boot the host with cgroup v2 (systemd.unified_cgroup_hierarchy=1)'
      : 'run Docker rootful or boot the host with cgroup v2 (systemd.unified_cgroup_hierarchy=1)';
  return `${engine}; or, knowing that the limits will not hold, set ${ALLOW_UNENFORCED_LIMITS_ENV}=1 (each episode's header records it)`;
}

/** The fix when the engine cannot start a container's init process (`Init: true`): Podman without catatonit. */
export const CATATONIT_FIX =
  "install the engine's container init: sudo apt-get install catatonit (Fedora/RHEL: sudo dnf install catatonit), then restart Podman's service";

/** Whether an engine's error says it has no init binary for `Init: true` (Podman: "container-init binary not found"). */
export function needsContainerInit(message: string): boolean {
  return /container-init binary not found|catatonit/i.test(message);
}

/** Calls a GET endpoint of the engine through dockerode's modem (for endpoints dockerode has no method for). */
function getJson<T>(docker: Docker, path: string, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    docker.modem.dial(
      {
        path,
        method: 'GET',
        statusCodes: { 200: true, 404: 'not found', 500: 'server error' },
        options: {},
        abortSignal: AbortSignal.timeout(timeoutMs),
      } as Parameters<typeof docker.modem.dial>[0],
      (err: unknown, data: unknown) => (err ? reject(err as Error) : resolve(data as T)),
    );
  });
}

/** Whether the engine answers libpod's own ping (Podman; Docker says 404 at once). */
async function answersLibpod(docker: Docker, timeoutMs: number): Promise<boolean> {
  try {
    await getJson<unknown>(docker, '/v4.0.0/libpod/_ping', timeoutMs);
    return true;
  } catch {
    return false;
  }
}

/**
 * Asks the engine what it is and, for the limit rule, whether it is rootless and on which
 * cgroup version. Podman answers libpod's `/_ping` at once, and its libpod `/info` says all
 * of it (version, `host.security.rootless`, `host.cgroupVersion`); its `/version` is not
 * asked because it runs the OCI runtime and conmon to report their versions (10 s and more
 * on a loaded 2-core host). Otherwise `/version` (an engine naming Podman in
 * `Components[].Name` counts as Podman) and Docker's `/info`. A missing `/info` leaves the
 * facts null. Once per connection ({@link DockerEngine.info}).
 */
export async function detectEngine(docker: Docker, timeoutMs = 20_000): Promise<EngineInfo> {
  if (await answersLibpod(docker, timeoutMs)) {
    // libpod's API is versioned on its own; any 4.x or later engine answers under /v4.0.0.
    const info = await getJson<LibpodInfoAnswer & { version?: { Version?: string; APIVersion?: string } }>(
      docker,
      '/v4.0.0/libpod/info',
      timeoutMs,
    ).catch(() => null);
    const runtimes = runtimesOf('podman', info);
    return {
      kind: 'podman',
      version: info?.version?.Version ?? 'unknown',
      apiVersion: info?.version?.APIVersion ? `libpod ${info.version.APIVersion}` : 'unknown',
      ...hostFacts('podman', info),
      ...(runtimes ? { runtimes } : {}),
    };
  }
  const version = (await (docker.version as (opts: object) => Promise<VersionAnswer>).call(docker, {
    abortSignal: AbortSignal.timeout(timeoutMs),
  })) as VersionAnswer;
  const kind = engineKindOf(version);
  const info = await getJson<LibpodInfoAnswer | DockerInfoAnswer>(
    docker,
    kind === 'podman' ? '/v4.0.0/libpod/info' : '/info',
    timeoutMs,
  ).catch(() => null);
  const runtimes = runtimesOf(kind, info);
  return {
    kind,
    version: version.Version ?? 'unknown',
    apiVersion: version.ApiVersion ?? 'unknown',
    ...hostFacts(kind, info),
    ...(runtimes ? { runtimes } : {}),
  };
}
