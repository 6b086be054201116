import { access, constants, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_IMAGE, SANDBOX_IMAGE_VERSION } from '../../shared/constants.js';
import { formatBytes } from '../../shared/format-bytes.js';
import {
  ALLOW_UNENFORCED_LIMITS_ENV,
  CATATONIT_FIX,
  limitsFix,
  limitsProblem,
  needsContainerInit,
  unenforcedLimitsAllowed,
} from './docker/engine-kind.js';
import type { DockerReachability } from './docker/ping.js';
import type { Engine } from './open-engine.js';
import { describeChannel } from './sandbox/helper-channel.js';
import { defaultSandboxConfig } from './sandbox/limits.js';

/** The ids of doctor's checks, in the order they run. */
export type DoctorCheckId = 'docker' | 'image' | 'image_version' | 'sandbox' | 'store';

/** One check: what it found and, when it failed, the command or step that fixes it. */
export interface DoctorCheck {
  readonly id: DoctorCheckId;
  readonly ok: boolean;
  readonly detail: string;
  readonly fix: string;
}

/** The doctor's verdict: `ok` only when a sandbox can start now and the store is usable. */
export interface DoctorReport {
  readonly ok: boolean;
  readonly checks: DoctorCheck[];
  /** The store's location and disk use. */
  readonly store: { readonly path: string; readonly bytes: number };
}

/** Starts a sandbox with default limits, runs `true` in it and destroys it; resolves with a detail line. */
export type SandboxProbe = (engine: DoctorEngine) => Promise<string>;

/**
 * What the doctor takes from {@link openEngine}: the environment, the store home, the provider
 * and the engine's own Docker questions, asked on the connection its sandboxes use (the CLI
 * opens its engine with `sweep: false`: doctor only looks, it removes nothing, not even orphans).
 */
export type DoctorEngine = Pick<Engine, 'env' | 'home' | 'provider' | 'reachability' | 'sandboxImage'>;

/** The default probe: a sandbox of the default config (security defaults, helper) runs `true`. */
export const probeSandbox: SandboxProbe = async (engine) => {
  const started = performance.now();
  const provider = await engine.provider();
  const sandbox = await provider.create(defaultSandboxConfig());
  try {
    const result = await sandbox.exec({ command: 'true', timeoutMs: 10_000 });
    if (!result.ok || result.exit_code !== 0)
      throw new Error(`\`true\` gave ${result.error ? result.error.code : `exit code ${result.exit_code}`}`);
    const ran = `a sandbox started and ran \`true\` in ${Math.round(performance.now() - started)} ms`;
    return sandbox.channel ? `${ran}; ${describeChannel(sandbox.channel)}` : ran;
  } finally {
    await sandbox.destroy();
  }
};

const IMAGE_FIX = 'npx stepbox image build';

/** Bytes used under a directory (apparent file sizes; symlinks not followed); 0 when it does not exist. */
export async function diskUse(dir: string): Promise<number> {
  let total = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await diskUse(path);
    else total += (await lstat(path)).size;
  }
  return total;
}

async function checkStore(path: string): Promise<{ check: DoctorCheck; bytes: number }> {
  try {
    await mkdir(path, { recursive: true });
    await access(path, constants.W_OK);
    const bytes = await diskUse(path);
    return { check: { id: 'store', ok: true, detail: `${formatBytes(bytes)} in ${path}`, fix: '' }, bytes };
  } catch (e) {
    return {
      check: {
        id: 'store',
        ok: false,
        detail: `the store at ${path} is not usable: ${(e as Error).message}`,
        fix: `make ${path} writable, or set STEPBOX_HOME to a writable directory`,
      },
      bytes: 0,
    };
  }
}

/**
 * The `docker` check from the reachability verdict: the engine answers, and it would hold a
 * sandbox's limits — an engine that would not (rootless on cgroup v1) fails it with the
 * reason and the fix, unless the user allowed that explicitly (then the detail says so).
 */
export function engineCheck(reach: DockerReachability, env: NodeJS.ProcessEnv): DoctorCheck {
  if (!reach.ok || !reach.engine) return { id: 'docker', ok: reach.ok, detail: reach.detail, fix: reach.fix };
  const problem = limitsProblem(reach.engine);
  if (!problem) return { id: 'docker', ok: true, detail: reach.detail, fix: '' };
  if (unenforcedLimitsAllowed(env))
    return {
      id: 'docker',
      ok: true,
      detail: `${reach.detail}; ${problem} — allowed by ${ALLOW_UNENFORCED_LIMITS_ENV}=1, recorded in each episode's header`,
      fix: '',
    };
  return {
    id: 'docker',
    ok: false,
    detail: `${reach.detail}; ${problem}: stepbox refuses to start sandboxes there`,
    fix: limitsFix(reach.engine.kind),
  };
}

/** The fix for a sandbox that could not start, from the engine's own message where it names one. */
export function sandboxStartFix(message: string): string {
  if (needsContainerInit(message)) return CATATONIT_FIX;
  return 'run `STEPBOX_LOG=debug npx stepbox sandbox exec -- true` to see why; `docker info` (or `podman info`) shows the engine state';
}

/**
 * Runs every check: Docker or Podman reachable (bounded) and holding the limits, image present, image version, a sandbox
 * starts and runs `true`, the store. Checks that depend on a failed one are reported as
 * failed with the same fix, so every id is always present.
 */
export async function runDoctor(
  engine: DoctorEngine,
  probe: SandboxProbe = probeSandbox,
): Promise<DoctorReport> {
  const env = engine.env;
  const checks: DoctorCheck[] = [];
  const reach = await engine.reachability();
  const held = engineCheck(reach, env);
  checks.push(held);

  if (!held.ok) {
    const why = reach.ok ? 'the engine would not hold the limits' : 'the engine is unreachable';
    for (const id of ['image', 'image_version', 'sandbox'] as const)
      checks.push({ id, ok: false, detail: `not checked: ${why}`, fix: held.fix });
  } else {
    const image = await engine.sandboxImage().catch((e: Error) => e);
    if (image instanceof Error) {
      checks.push({
        id: 'image',
        ok: false,
        detail: `cannot inspect ${SANDBOX_IMAGE}: ${image.message}`,
        fix: reach.fix,
      });
    } else {
      checks.push({
        id: 'image',
        ok: image.present,
        detail: image.present ? `${SANDBOX_IMAGE} is present` : `${SANDBOX_IMAGE} is missing`,
        fix: image.present ? '' : IMAGE_FIX,
      });
    }
    const versionOk = !(image instanceof Error) && image.present && image.version === SANDBOX_IMAGE_VERSION;
    checks.push({
      id: 'image_version',
      ok: versionOk,
      detail:
        image instanceof Error || !image.present
          ? 'not checked: no image'
          : `label stepbox.image.version=${image.version ?? '(none)'}, this build expects ${SANDBOX_IMAGE_VERSION}`,
      fix: versionOk ? '' : IMAGE_FIX,
    });
    if (!versionOk) {
      checks.push({ id: 'sandbox', ok: false, detail: 'not checked: no usable image', fix: IMAGE_FIX });
    } else {
      try {
        checks.push({ id: 'sandbox', ok: true, detail: await probe(engine), fix: '' });
      } catch (e) {
        const message = (e as Error).message;
        checks.push({
          id: 'sandbox',
          ok: false,
          detail: `a sandbox could not start: ${message}`,
          fix: sandboxStartFix(message),
        });
      }
    }
  }
  const store = await checkStore(engine.home);
  checks.push(store.check);
  return { ok: checks.every((c) => c.ok), checks, store: { path: engine.home, bytes: store.bytes } };
}
