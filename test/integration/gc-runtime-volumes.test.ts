import { expect, it } from 'vitest';
import { describeDocker } from '../support/docker.js';
import {
  ensureRuntimeVolume,
  pruneRuntimeVolumes,
  RUNTIME_VOLUME_LABEL,
  RUNTIME_VOLUME_PREFIX,
  runtimeVolumeName,
} from '../../electron/engine/docker/runtime-volume.js';
import { STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { runCli } from '../support/cli.js';
import { gcVolumesDryRun, useVolumeGcFixture } from '../support/volume-gc.js';

describeDocker('stepbox gc --runtime-volumes', () => {
  // The test's volumes also carry this run's own label: the real prune below touches only
  // them, never another build's runtime that someone else on this engine still uses.
  const f = useVolumeGcFixture('stepbox-runtime');
  const { engine, unused: old, used } = f;
  const current = runtimeVolumeName();

  it("removes old builds' runtimes no container uses; keeps this build's and one a container mounts", async () => {
    await ensureRuntimeVolume(engine, SANDBOX_IMAGE);
    // Labelled as the real runtime volumes are (runtime-volume.ts), under an old build's name.
    for (const name of [old, used])
      await engine.createVolume(name, {
        [STEPBOX_LABEL]: '1',
        [RUNTIME_VOLUME_LABEL]: name.slice(RUNTIME_VOLUME_PREFIX.length),
        ...f.mineLabels,
      });
    await f.mount('/opt/runtime');

    // The CLI's dry run names the old unused one, keeps the used one, never this build's; removes nothing.
    const report = await gcVolumesDryRun(f.home, 'runtime');
    expect(report.dry_run).toBe(true);
    expect(report.removed).toContain(old);
    expect(report.in_use).toContain(used);
    expect(report.removed).not.toContain(used);
    expect([...report.removed, ...report.in_use]).not.toContain(current);
    expect(await engine.hasVolume(old)).toBe(true);

    // The text form lists what it would remove.
    const text = await runCli(['gc', '--runtime-volumes', '--dry-run'], {
      env: { STEPBOX_HOME: f.home },
      timeoutMs: 60_000,
    });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`would remove volume ${old}\n`);
    expect(text.stdout).toMatch(/Old runtime volumes: \d+ unused, \d+ kept/);

    // The prune itself (limited to this test's volumes): the old one goes, the used one stays.
    expect(await pruneRuntimeVolumes(engine, false, [f.mine])).toEqual({ removed: [old], in_use: [used] });
    expect(await engine.hasVolume(old)).toBe(false);
    expect(await engine.hasVolume(used)).toBe(true);
    expect(await engine.hasVolume(current)).toBe(true);

    // Once no container mounts it, the other old one goes too.
    await f.unmount();
    expect(await pruneRuntimeVolumes(engine, false, [f.mine])).toEqual({ removed: [used], in_use: [] });
    expect(await engine.hasVolume(used)).toBe(false);
  });
});
