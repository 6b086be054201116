import { openStats, type StatsStream } from '../docker/stats.js';
import { openTerminal, type Terminal, type TerminalOptions } from '../docker/terminal.js';
import { DockerSandboxProvider } from './docker-provider.js';
import { SandboxFailure, type SandboxProvider } from './sandbox.js';

export type { HumanCommand, Terminal } from '../docker/terminal.js';
export type { StatsSample, StatsStream } from '../docker/stats.js';

/** Options of {@link openSandboxTerminal}: the terminal's, less the client (the provider's is used). */
export type SandboxTerminalOptions = Omit<TerminalOptions, 'docker'>;

/**
 * The provider's own Docker connection: a terminal or a stats stream goes to the engine the
 * sandbox lives on (DOCKER_HOST included), never to a second client made from the environment.
 */
function dockerOf(provider: SandboxProvider): DockerSandboxProvider['engine']['docker'] {
  if (provider instanceof DockerSandboxProvider) return provider.engine.docker;
  throw new SandboxFailure(
    'sandbox_failed',
    `a ${provider.backend} sandbox has no live terminal or stats: they need a Docker sandbox`,
  );
}

/** Opens an interactive TTY shell in one of `provider`'s sandboxes (see `docker/terminal.ts`). */
export function openSandboxTerminal(
  provider: SandboxProvider,
  sandboxId: string,
  options: SandboxTerminalOptions,
): Promise<Terminal> {
  return openTerminal(sandboxId, { ...options, docker: dockerOf(provider) });
}

/** Opens the live resource-use stream of one of `provider`'s sandboxes (see `docker/stats.ts`). */
export function openSandboxStats(provider: SandboxProvider, sandboxId: string): Promise<StatsStream> {
  return openStats(sandboxId, dockerOf(provider));
}
