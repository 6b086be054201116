import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { describeDocker } from '../support/docker.js';
import { AGENT_VOLUME_LABEL, pruneAgentVolumes } from '../../electron/engine/docker/agent-volume.js';
import { STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { gcVolumesDryRun, useVolumeGcFixture } from '../support/volume-gc.js';

/** An empty tar (two zero blocks): the volume exists, its content does not matter here. */
const emptyTar = () => Readable.from([Buffer.alloc(1024)]);

describeDocker('stepbox gc --agent-volumes', () => {
  // Every volume here carries this run's own label too: a prune in a test touches only its own.
  const f = useVolumeGcFixture('stepbox-agent');
  const { engine, unused, used } = f;

  it('removes the copies of agents no container uses and keeps one a stopped container mounts', async () => {
    for (const name of [unused, used])
      await engine.fillVolume(
        name,
        SANDBOX_IMAGE,
        { [STEPBOX_LABEL]: '1', [AGENT_VOLUME_LABEL]: name, ...f.mineLabels },
        emptyTar(),
      );
    await f.mount('/opt/agent');

    // The CLI's dry run names both, removes nothing.
    const report = await gcVolumesDryRun(f.home, 'agent');
    expect(report.dry_run).toBe(true);
    expect(report.removed).toContain(unused);
    expect(report.removed).not.toContain(used);
    expect(report.in_use).toContain(used);
    expect(await engine.hasVolume(unused)).toBe(true);

    // The prune itself (limited to this test's volumes): the unused one goes, the used one stays.
    const pruned = await pruneAgentVolumes(engine, false, [f.mine]);
    expect(pruned).toEqual({ removed: [unused], in_use: [used] });
    expect(await engine.hasVolume(unused)).toBe(false);
    expect(await engine.hasVolume(used)).toBe(true);
  });
});
