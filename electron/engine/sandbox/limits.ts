import { DEFAULT_VERIFIER_FILES_DIR, Limits, SandboxSpec, type Task } from '../../../shared/task.js';
import { parseSize } from '../../../shared/size.js';
import { DEFAULT_HOME_BYTES, type SandboxConfig, type SandboxLimits, type VerifierDir } from './sandbox.js';

function bytes(value: string | number, field: string): number {
  const n = parseSize(value);
  if (n === null)
    throw new RangeError(`limits.${field}: "${value}" is not a Docker size such as "512m" or "1g"`);
  return n;
}

/** Converts a task's limits (Docker size syntax) to bytes and counts. */
export function sandboxLimits(limits: Limits): SandboxLimits {
  return {
    cpus: limits.cpus,
    memoryBytes: bytes(limits.memory, 'memory'),
    pids: limits.pids,
    diskBytes: bytes(limits.disk, 'disk'),
    outputBytes: bytes(limits.output, 'output'),
    ...(limits.home !== undefined ? { homeBytes: bytes(limits.home, 'home') } : {}),
  };
}

/**
 * The sandbox config of a task's `sandbox` section (defaults filled in by the schema); with
 * its `verifier`, the folders of the verifier's own (see {@link verifierDirs}).
 */
export function sandboxConfig(spec: SandboxSpec, verifier?: Task['verifier']): SandboxConfig {
  const dirs = verifierDirs(verifier ?? null);
  return {
    image: spec.image,
    network: spec.network,
    limits: sandboxLimits(spec.limits),
    ...(spec.workdir !== undefined ? { workdir: spec.workdir } : {}),
    ...(spec.env !== undefined ? { env: spec.env } : {}),
    ...(dirs.length ? { verifierDirs: dirs } : {}),
    ...(spec.runtime !== undefined ? { runtime: spec.runtime } : {}),
  };
}

/** Room for a verifier's reward folder (its reward files and whatever logs its script keeps there). */
const REWARD_DIR_BYTES = 64 * 1024 * 1024;

/**
 * The folders a verifier owns in its sandbox: where its `files` go (room for twice their size,
 * at least 16 MiB) and its `reward_dir`. None for a verifier with neither (the usual task).
 */
export function verifierDirs(verifier: Task['verifier']): VerifierDir[] {
  if (!verifier) return [];
  const dirs: VerifierDir[] = [];
  if (verifier.files && Object.keys(verifier.files).length > 0) {
    let total = 0;
    for (const f of Object.values(verifier.files))
      total += typeof f === 'string' ? Buffer.byteLength(f) : Math.ceil((f.base64.length * 3) / 4);
    dirs.push({
      path: verifier.files_dir ?? DEFAULT_VERIFIER_FILES_DIR,
      bytes: Math.max(16 * 1024 * 1024, 2 * total),
    });
  }
  if (verifier.reward_dir) dirs.push({ path: verifier.reward_dir, bytes: REWARD_DIR_BYTES });
  return dirs;
}

/** The default sandbox: the stepbox image, no network, default limits (1 CPU, 1g, 256 pids, 1g disk, 1m output). */
export function defaultSandboxConfig(overrides: Partial<Limits> = {}): SandboxConfig {
  return sandboxConfig(SandboxSpec.parse({ limits: Limits.parse(overrides) }));
}

/** The key under which a warm pool keeps sandboxes of one config (image + network + limits + runtime). */
export function configKey(config: SandboxConfig): string {
  const l = config.limits;
  return [
    config.image,
    config.network,
    l.cpus,
    l.memoryBytes,
    l.pids,
    l.diskBytes,
    l.outputBytes,
    l.homeBytes ?? DEFAULT_HOME_BYTES,
    ...(config.agentFiles ? [config.agentFiles.hash] : []),
    // Appended only when set, so the default config keeps the key it always had.
    ...(config.workdir !== undefined ? [`workdir=${config.workdir}`] : []),
    ...(config.env !== undefined ? [`env=${JSON.stringify(config.env)}`] : []),
    ...(config.verifierDirs ?? []).map((d) => `${d.path}:${d.bytes}`),
    // A runc sandbox must never be handed out for a runsc task (nor the other way).
    ...(config.runtime !== undefined ? [`runtime=${config.runtime}`] : []),
  ].join('|');
}
