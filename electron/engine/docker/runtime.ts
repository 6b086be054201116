import { SandboxFailure } from '../sandbox/sandbox.js';
import { describeRuntimes, engineName, type EngineInfo } from './engine-kind.js';

/** gVisor's runtime name, as Debian's `runsc` package and gVisor's docs register it. */
export const GVISOR_RUNTIME = 'runsc';

/** How to give Docker gVisor, for a message naming a missing `runsc`. */
export const GVISOR_FIX =
  'install gVisor (Debian/Ubuntu: sudo apt-get install runsc) and register it with Docker: add {"runtimes": {"runsc": {"path": "/usr/bin/runsc"}}} to /etc/docker/daemon.json and restart dockerd (or start dockerd with --add-runtime runsc=/usr/bin/runsc)';

/** The words an engine uses when a container names a runtime it does not have. */
const UNKNOWN_RUNTIME = /unknown runtime|runtime .* not (found|defined|configured)|no such runtime/i;

/**
 * The message and fix for a runtime `runtime` the engine does not offer, naming those it does.
 * `offered` is the engine's own list where it gave one.
 */
function unavailable(info: EngineInfo, runtime: string): SandboxFailure {
  const offered = info.runtimes ? describeRuntimes(info.runtimes) : '';
  const engine = engineName(info.kind);
  const fix =
    runtime === GVISOR_RUNTIME
      ? GVISOR_FIX
      : `name a runtime the engine offers (sandbox.runtime in the task, or --runtime), or register "${runtime}" with the engine`;
  return new SandboxFailure(
    'runtime_unavailable',
    `the task asks for container runtime "${runtime}", which ${engine} does not offer${offered ? ` (it offers ${offered})` : ''}. A sandbox is never started on another runtime in its place`,
    fix,
  );
}

/**
 * Checks that the engine offers the runtime a sandbox asks for (none asked: the engine's
 * default). Rejects with `runtime_unavailable` naming the runtimes it does offer: a task
 * that asks for gVisor must never run on runc because this machine lacks it. An engine that
 * does not list its runtimes (Podman) is left to judge the name at create
 * ({@link runtimeRefused}).
 */
export function checkRuntime(info: EngineInfo, runtime: string | undefined): void {
  if (runtime === undefined) return;
  const names = info.runtimes?.names ?? [];
  if (names.length === 0) return;
  if (!names.includes(runtime)) throw unavailable(info, runtime);
}

/** The runtime a sandbox of `runtime` runs on here: the one asked for, else the engine's default (null when unknown). */
export function effectiveRuntime(info: EngineInfo, runtime: string | undefined): string | null {
  return runtime ?? info.runtimes?.default ?? null;
}

/**
 * The engine's own refusal of a runtime name at create (an engine that did not list its
 * runtimes), as `runtime_unavailable`; null when `message` is about something else.
 */
export function runtimeRefused(
  info: EngineInfo,
  runtime: string | undefined,
  message: string,
): SandboxFailure | null {
  if (runtime === undefined || !UNKNOWN_RUNTIME.test(message)) return null;
  return unavailable(info, runtime);
}
