import Docker from 'dockerode';
import { expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { ownerLabel } from '../../electron/engine/docker/owner.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { describeDocker } from '../support/docker.js';

/** Open unix-socket connections keeping this process alive (idle keep-alive sockets are unref'd). */
function openPipes(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;
}

/** Resolves once `condition` holds; rejects after `ms`. */
async function waitUntil(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setImmediate(r));
  }
}

describeDocker('an exec whose start fails', () => {
  it('closes its connection, so a finished CLI process can exit', async () => {
    const docker = new Docker();
    const engine = new DockerEngine(docker);
    const id = await engine.createAndStart(containerSpec(defaultSandboxConfig(), ownerLabel()));
    const getContainer = docker.getContainer.bind(docker);
    try {
      // The race a `kill -9 -1` in a sandbox opens: the container stops between the exec's
      // creation and its start, and the engine answers the start with 409 instead of the upgrade.
      docker.getContainer = (cid: string) => {
        const container = getContainer(cid);
        const create = container.exec.bind(container);
        container.exec = (async (options: Docker.ExecCreateOptions) => {
          const exec = await create(options);
          await container.kill();
          await container.wait();
          return exec;
        }) as typeof container.exec;
        return container;
      };
      const before = openPipes();
      await expect(engine.exec(id, ['cat'])).rejects.toMatchObject({ code: 'sandbox_lost' });
      // Before the fix the rejected start's connection stayed open for good.
      await waitUntil(() => openPipes() <= before, 5_000);
      expect(openPipes()).toBeLessThanOrEqual(before);
    } finally {
      docker.getContainer = getContainer;
      await engine.remove(id);
    }
  });
});
