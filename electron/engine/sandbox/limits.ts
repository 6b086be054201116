import { Limits, SandboxSpec } from '../../../shared/task.js';
import { parseSize } from '../../../shared/size.js';
import { DEFAULT_HOME_BYTES, type SandboxConfig, type SandboxLimits } from './sandbox.js';

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

/** The sandbox config of a task's `sandbox` section (defaults filled in by the schema). */
export function sandboxConfig(spec: SandboxSpec): SandboxConfig {
  return { image: spec.image, network: spec.network, limits: sandboxLimits(spec.limits) };
}

/** The default sandbox: the stepbox image, no network, default limits (1 CPU, 1g, 256 pids, 1g disk, 1m output). */
export function defaultSandboxConfig(overrides: Partial<Limits> = {}): SandboxConfig {
  return sandboxConfig(SandboxSpec.parse({ limits: Limits.parse(overrides) }));
}

/** The key under which a warm pool keeps sandboxes of one config (image + network + limits). */
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
  ].join('|');
}
