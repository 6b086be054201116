import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import Docker from 'dockerode';
import { afterAll, expect, it } from 'vitest';
import { describeDocker } from '../support/docker.js';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { AGENT_VOLUME_LABEL, pruneAgentVolumes } from '../../electron/engine/docker/agent-volume.js';
import { STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { runCli } from '../support/cli.js';
import { tempHome } from '../support/harness.js';

/** An empty tar (two zero blocks): the volume exists, its content does not matter here. */
const emptyTar = () => Readable.from([Buffer.alloc(1024)]);

describeDocker('stepbox gc --agent-volumes', () => {
  const docker = new Docker();
  const engine = new DockerEngine(docker);
  // Every volume here carries this run's own label too: a prune in a test touches only its own.
  const mine = `stepbox.test-run=${randomUUID()}`;
  const [mineKey, mineValue] = mine.split('=');
  const unused = `stepbox-agent-test-${randomUUID().slice(0, 8)}`;
  const used = `stepbox-agent-test-${randomUUID().slice(0, 8)}`;
  let user: Docker.Container | undefined;
  const env = tempHome();

  afterAll(async () => {
    await user?.remove({ force: true }).catch(() => undefined);
    for (const v of [unused, used]) await engine.removeVolume(v).catch(() => undefined);
    env.cleanup();
  });

  it('removes the copies of agents no container uses and keeps one a stopped container mounts', async () => {
    for (const name of [unused, used])
      await engine.fillVolume(
        name,
        SANDBOX_IMAGE,
        { [STEPBOX_LABEL]: '1', [AGENT_VOLUME_LABEL]: name, [mineKey]: mineValue },
        emptyTar(),
      );
    // Created, never started: a container that mounts a volume keeps it in use.
    user = await docker.createContainer({
      Image: SANDBOX_IMAGE,
      Cmd: ['true'],
      NetworkDisabled: true,
      HostConfig: { NetworkMode: 'none', Mounts: [{ Type: 'volume', Source: used, Target: '/opt/agent' }] },
    });

    // The CLI's dry run names both, removes nothing.
    const dry = await runCli(['gc', '--agent-volumes', '--dry-run', '--json'], {
      env: { STEPBOX_HOME: env.home },
      timeoutMs: 60_000,
    });
    expect(dry.code, dry.stderr).toBe(0);
    const report = JSON.parse(dry.stdout) as {
      dry_run: boolean;
      agent_volumes: { removed: string[]; in_use: string[] };
    };
    expect(report.dry_run).toBe(true);
    expect(report.agent_volumes.removed).toContain(unused);
    expect(report.agent_volumes.removed).not.toContain(used);
    expect(report.agent_volumes.in_use).toContain(used);
    expect(await engine.hasVolume(unused)).toBe(true);

    // The prune itself (limited to this test's volumes): the unused one goes, the used one stays.
    const pruned = await pruneAgentVolumes(engine, false, [mine]);
    expect(pruned).toEqual({ removed: [unused], in_use: [used] });
    expect(await engine.hasVolume(unused)).toBe(false);
    expect(await engine.hasVolume(used)).toBe(true);
  });
});
