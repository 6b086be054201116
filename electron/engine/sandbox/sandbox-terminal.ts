import type { StatsStream } from '../docker/stats.js';
import type { Terminal } from '../docker/terminal.js';
import { SandboxFailure, type SandboxProvider, type SandboxTerminalOptions } from './sandbox.js';

export type { HumanCommand, Terminal } from '../docker/terminal.js';
export type { StatsSample, StatsStream } from '../docker/stats.js';
export type { SandboxTerminalOptions } from './sandbox.js';

/** Why a backend without terminals cannot give one: the same words for a terminal and for stats. */
function noTerminal(provider: SandboxProvider): SandboxFailure {
  return new SandboxFailure(
    'sandbox_failed',
    `a ${provider.backend} sandbox has no live terminal or stats: they need a Docker sandbox`,
  );
}

/**
 * Opens an interactive TTY shell in one of `provider`'s sandboxes, over the provider's own
 * connection (the engine the sandbox lives on, DOCKER_HOST included; see `docker/terminal.ts`).
 */
export function openSandboxTerminal(
  provider: SandboxProvider,
  sandboxId: string,
  options: SandboxTerminalOptions,
): Promise<Terminal> {
  if (!provider.terminal) return Promise.reject(noTerminal(provider));
  return provider.terminal(sandboxId, options);
}

/** Opens the live resource-use stream of one of `provider`'s sandboxes (see `docker/stats.ts`). */
export function openSandboxStats(
  provider: SandboxProvider,
  sandboxId: string,
  taskMemoryBytes: number,
): Promise<StatsStream> {
  if (!provider.stats) return Promise.reject(noTerminal(provider));
  return provider.stats(sandboxId, taskMemoryBytes);
}
