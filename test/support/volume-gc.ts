import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, expect } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { runCli } from './cli.js';
import { tempHome } from './harness.js';

/** Two volumes of a `gc --KIND-volumes` test, one to be kept in use by a container, and the run's own label. */
export interface VolumeGcFixture {
  readonly docker: Docker;
  readonly engine: DockerEngine;
  /** Named `PREFIX-test-…`: the one no container will use. */
  readonly unused: string;
  /** Named `PREFIX-test-…`: the one {@link VolumeGcFixture.mount} puts a container on. */
  readonly used: string;
  /** This run's own label as `key=value`: a prune limited to it touches only this test's volumes. */
  readonly mine: string;
  /** The same label as a label map, to create the volumes with. */
  readonly mineLabels: Readonly<Record<string, string>>;
  readonly home: string;
  /** Creates (never starts) a container mounting `used` at `target`: enough to keep it in use. */
  mount(target: string): Promise<void>;
  /** Removes that container again. */
  unmount(): Promise<void>;
}

/**
 * The fixture of a volume gc test: volume names under `prefix`, a label of this run, a
 * temporary STEPBOX_HOME, and everything removed after the suite (call inside a describe).
 */
export function useVolumeGcFixture(prefix: string): VolumeGcFixture {
  const docker = new Docker();
  const engine = new DockerEngine(docker);
  const run = randomUUID();
  const env = tempHome();
  let user: Docker.Container | undefined;
  const fixture: VolumeGcFixture = {
    docker,
    engine,
    unused: `${prefix}-test-${randomUUID().slice(0, 8)}`,
    used: `${prefix}-test-${randomUUID().slice(0, 8)}`,
    mine: `stepbox.test-run=${run}`,
    mineLabels: { 'stepbox.test-run': run },
    home: env.home,
    async mount(target) {
      user = await docker.createContainer({
        Image: SANDBOX_IMAGE,
        Cmd: ['true'],
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          Mounts: [{ Type: 'volume', Source: fixture.used, Target: target }],
        },
      });
    },
    async unmount() {
      await user?.remove({ force: true });
      user = undefined;
    },
  };
  afterAll(async () => {
    await fixture.unmount().catch(() => undefined);
    for (const v of [fixture.unused, fixture.used]) await engine.removeVolume(v).catch(() => undefined);
    env.cleanup();
  });
  return fixture;
}

/** What `stepbox gc --KIND-volumes --dry-run --json` reported for that kind (its exit checked). */
export async function gcVolumesDryRun(
  home: string,
  kind: 'agent' | 'runtime',
): Promise<{ dry_run: boolean; removed: string[]; in_use: string[] }> {
  const run = await runCli(['gc', `--${kind}-volumes`, '--dry-run', '--json'], {
    env: { STEPBOX_HOME: home },
    timeoutMs: 60_000,
  });
  expect(run.code, run.stderr).toBe(0);
  const report = JSON.parse(run.stdout) as { dry_run: boolean } & Record<
    string,
    { removed: string[]; in_use: string[] }
  >;
  return { dry_run: report.dry_run, ...report[`${kind}_volumes`] };
}
