import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import {
  containerSpec,
  keptName,
  OWNER_LABEL,
  STEPBOX_LABEL,
} from '../../electron/engine/docker/container-spec.js';
import { ownerGone } from '../../electron/engine/docker/owner.js';
import {
  createDockerProvider,
  type DockerSandboxProvider,
} from '../../electron/engine/sandbox/docker-provider.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { runCli } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { tempHome } from '../support/harness.js';

const TASK = 'resources/tasks/hello-python';
const AGENT = 'scripted:resources/tasks/hello-python/agent.jsonl';

describeDocker('stepbox run --keep survives the next process', () => {
  const engine = new DockerEngine();
  const created: string[] = [];
  let env: ReturnType<typeof tempHome>;
  let second: DockerSandboxProvider | undefined;

  beforeAll(() => {
    env = tempHome();
  });

  afterAll(async () => {
    await second?.close();
    await Promise.all(created.map((id) => engine.remove(id)));
    env?.cleanup();
  });

  it('a second provider sweeps orphans but leaves the kept sandbox; docker rm -f removes it', async () => {
    const run = await runCli(['run', TASK, '--agent', AGENT, '--keep', '--json'], {
      env: { STEPBOX_HOME: env.home },
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const id = JSON.parse(run.stdout).sandbox as string;
    created.push(id);
    expect(run.stderr).toContain(`sandbox kept: ${id}`);
    expect(run.stderr).toContain(`docker rm -f ${id.slice(0, 12)}`);

    // Its owner (the CLI process) has exited: by the owner rule alone it is an orphan.
    const [kept] = (await engine.listByLabel(`${STEPBOX_LABEL}=1`)).filter((c) => c.id === id);
    expect(kept.names).toEqual([keptName(id)]);
    expect(ownerGone(kept.labels[OWNER_LABEL])).toBe(true);

    // A real orphan next to it (dead owner, not kept) shows the sweep did run.
    const orphan = await engine.createAndStart(
      containerSpec(defaultSandboxConfig(), kept.labels[OWNER_LABEL]),
    );
    created.push(orphan);

    second = await createDockerProvider();
    expect(await engine.isRunning(orphan)).toBe(false);
    expect(await second.sweepOrphans()).not.toContain(id);
    expect(await engine.isRunning(id)).toBe(true);

    await engine.remove(id);
    expect(await engine.isRunning(id)).toBe(false);
    expect((await engine.listByLabel(`${STEPBOX_LABEL}=1`)).map((c) => c.id)).not.toContain(id);
  });
});
