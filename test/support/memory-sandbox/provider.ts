import { SANDBOX_IMAGE } from '../../../shared/constants.js';
import { MemorySandbox } from './sandbox.js';
import {
  SandboxFailure,
  type Sandbox,
  type SandboxConfig,
  type SandboxLimits,
  type SandboxProvider,
} from '../../../electron/engine/sandbox/sandbox.js';

/** Limits for memory sandboxes in tests: small, so limit behaviour is cheap to reach. */
export const MEMORY_TEST_LIMITS: SandboxLimits = {
  cpus: 1,
  memoryBytes: 256 * 1024 ** 2,
  pids: 64,
  diskBytes: 64 * 1024 ** 2,
  outputBytes: 1024 ** 2,
};

/** A sandbox config for memory sandboxes (the image is only recorded). */
export function memorySandboxConfig(limits: Partial<SandboxLimits> = {}): SandboxConfig {
  return { image: SANDBOX_IMAGE, network: 'none', limits: { ...MEMORY_TEST_LIMITS, ...limits } };
}

/**
 * Creates {@link MemorySandbox}es. It has no networks: a config asking for one other
 * than `none` fails with `network_unavailable`, as Docker does for a missing network.
 */
export function createMemoryProvider(
  options: { readonly snapshotFileCapBytes?: number } = {},
): SandboxProvider {
  return {
    backend: 'memory',
    async create(config: SandboxConfig): Promise<Sandbox> {
      if (config.network !== 'none') {
        throw new SandboxFailure(
          'network_unavailable',
          `the memory sandbox has no network "${config.network}"; use "network": "none"`,
        );
      }
      return new MemorySandbox(config, options.snapshotFileCapBytes);
    },
  };
}
