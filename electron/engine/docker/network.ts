import { SandboxFailure } from '../sandbox/sandbox.js';
import type { DockerEngine } from './client.js';

/**
 * Checks that the engine has the network a task asks for. `none` always exists. Any
 * other name must already exist: stepbox never creates networks, and an engine started
 * with `--bridge=none` (as stepbox's CI runs it) has no `bridge` network at all.
 */
export async function checkNetwork(engine: DockerEngine, network: string): Promise<void> {
  if (network === 'none') return;
  if (await engine.hasNetwork(network)) return;
  const hint =
    network === 'bridge' || network === 'default'
      ? 'the Docker daemon was started with `--bridge=none` (dockerd setting "bridge": "none" in daemon.json), so it has no bridge network; restart dockerd without it'
      : `create it with \`docker network create ${network}\` (an engine started with \`--bridge=none\` has no bridge network)`;
  throw new SandboxFailure(
    'network_unavailable',
    `the task asks for network "${network}", which the Docker engine does not have: ${hint}`,
  );
}
