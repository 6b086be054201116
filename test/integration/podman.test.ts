import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { ownedContainers } from '../../electron/engine/docker/owner.js';
import { CHANNEL_ROOT } from '../../electron/engine/docker/container-spec.js';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { HELPER_SOCKET_PATH } from '../../electron/engine/sandbox/helper-socket.js';
import {
  createDockerProvider,
  type DockerSandboxProvider,
} from '../../electron/engine/sandbox/docker-provider.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { parseJsonOutput, runCli } from '../support/cli.js';
import { CONFORMANCE_CONFIG, sandboxConformance } from '../support/sandbox-conformance.js';

/**
 * The sandbox on Podman (rootful, `podman system service` on a private socket beside
 * Docker): the conformance suite, `sandbox selftest`, doctor, and one episode + fork,
 * against the engine at STEPBOX_PODMAN_HOST (.ci/podman.sh starts it and loads the image).
 * Without it a local run skips this file; under CI=true it fails.
 */
const PODMAN_HOST = process.env.STEPBOX_PODMAN_HOST;

/** dockerode's connection options for a `unix://` or `tcp://` engine address. */
function connection(host: string): Docker.DockerOptions {
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  const url = new URL(host.replace(/^tcp:/, 'http:'));
  return { host: url.hostname, port: Number(url.port || 2375), protocol: 'http' };
}

const engine = PODMAN_HOST ? new DockerEngine(new Docker(connection(PODMAN_HOST))) : null;

async function podmanProblem(): Promise<string | null> {
  if (!engine) return 'STEPBOX_PODMAN_HOST is not set (run .ci/podman.sh: it starts Podman and prints it)';
  try {
    await engine.ping();
    const info = await engine.info();
    if (info.kind !== 'podman') return `the engine at ${PODMAN_HOST} is ${info.kind}, not Podman`;
  } catch (e) {
    return `Podman at ${PODMAN_HOST} does not answer: ${(e as Error).message}`;
  }
  if (!(await engine.hasImage(SANDBOX_IMAGE)))
    return `${SANDBOX_IMAGE} is not in Podman's store: docker save ${SANDBOX_IMAGE} | podman load`;
  return null;
}

const podmanMissing = await (async () => {
  const problem = await podmanProblem();
  if (problem && process.env.CI === 'true')
    throw new Error(`Podman integration tests cannot run: ${problem}`);
  return problem;
})();

const describePodman = podmanMissing === null ? describe : describe.skip;

describePodman('podman backend', () => {
  let provider: DockerSandboxProvider | undefined;
  const storeRoot = mkdtempSync(join(tmpdir(), 'stepbox-podman-'));
  let stores = 0;
  const podman = async () => (provider ??= await createDockerProvider({ engine: engine!, sweep: false }));
  const store = () => new DiskSnapshotStore(join(storeRoot, String(stores++)));
  const home = mkdtempSync(join(tmpdir(), 'stepbox-podman-home-'));
  const cli = { env: { DOCKER_HOST: PODMAN_HOST, STEPBOX_HOME: home }, timeoutMs: 240_000 };

  afterAll(async () => {
    await provider?.close();
    rmSync(storeRoot, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
    expect(await ownedContainers(engine!)).toEqual([]);
  });

  sandboxConformance('podman', podman, store);

  it("holds the sandbox as on Docker: $HOME empty and the agent's, /etc/hosts without host entries, /var/tmp read-only", async () => {
    const box = await (await podman()).create(CONFORMANCE_CONFIG);
    try {
      const r = await box.exec({
        command:
          'ls -A ~ | wc -l; stat -c %u:%g ~ /workspace; grep -c . /etc/hosts; grep -E "host\\.(containers|docker)\\.internal" /etc/hosts; touch /var/tmp/x 2>&1; ulimit -n',
        timeoutMs: 30_000,
      });
      const lines = (r.stdout ?? '').trim().split('\n');
      expect(lines[0]).toBe('0');
      expect(lines.slice(1, 3)).toEqual(['1000:1000', '1000:1000']);
      expect(r.stdout).not.toMatch(/host\.(containers|docker)\.internal/);
      expect(r.stdout).toMatch(/Read-only file system/);
    } finally {
      await box.destroy();
    }
  }, 120_000);

  it("its helper speaks over the host's socket, which the agent can neither list nor connect to", async () => {
    const box = await (await podman()).create(CONFORMANCE_CONFIG);
    try {
      expect(box.channel).toEqual({ kind: 'socket' });
      const r = await box.exec({
        command: `ls ${CHANNEL_ROOT} 2>&1; python3 -c "import socket; socket.socket(socket.AF_UNIX).connect('${HELPER_SOCKET_PATH}')" 2>&1 | tail -1`,
        timeoutMs: 30_000,
      });
      expect(r.stdout?.match(/Permission denied/g)).toHaveLength(2);
    } finally {
      await box.destroy();
    }
  }, 120_000);

  it('sandbox selftest: every containment check holds', async () => {
    const run = await runCli(['sandbox', 'selftest', '--json'], cli);
    const report = parseJsonOutput<{ ok: boolean; checks: { id: string; ok: boolean; detail: string }[] }>(
      run,
    );
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(run.code).toBe(0);
  }, 300_000);

  it('doctor names Podman and passes', async () => {
    const run = await runCli(['doctor', '--json'], cli);
    const report = parseJsonOutput<{ ok: boolean; checks: { id: string; detail: string }[] }>(run);
    expect(report.checks.find((c) => c.id === 'docker')?.detail).toMatch(/^Podman \d/);
    expect(report.ok).toBe(true);
  }, 120_000);

  it('runs an episode to succeeded and forks it', async () => {
    const task = 'resources/tasks/hello-python';
    const ran = await runCli(['run', task, '--agent', `scripted:${task}/agent.jsonl`, '--json'], cli);
    const episode = parseJsonOutput<{ episode: string; status: string }>(ran);
    expect(episode.status).toBe('succeeded');
    const forked = await runCli(['fork', episode.episode, '--at', '3', '--json'], cli);
    const branch = parseJsonOutput<{ branch: string; status: string }>(forked);
    expect(branch.branch).not.toBe(episode.episode);
    expect(branch.status).toBe('succeeded');
  }, 300_000);
});
