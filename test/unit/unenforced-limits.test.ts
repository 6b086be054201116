import { afterEach, describe, expect, it } from 'vitest';
import type { DockerEngine } from '../../electron/engine/docker/client.js';
import type { EngineInfo } from '../../electron/engine/docker/engine-kind.js';
import { forkEpisode } from '../../electron/engine/harness/index.js';
import { createDockerProvider } from '../../electron/engine/sandbox/docker-provider.js';
import type { Sandbox, SandboxSupply } from '../../electron/engine/sandbox/sandbox.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import {
  call,
  final,
  memorySupply,
  memoryTask,
  script,
  startScripted,
  tempHome,
} from '../support/harness.js';

const ROOTLESS_V1: EngineInfo = {
  kind: 'podman',
  version: '4.3.1',
  apiVersion: '1.41',
  rootless: true,
  cgroupVersion: 1,
};

/** An engine that answers and says what it is; nothing else (the refusal comes before any container). */
function engineSaying(info: EngineInfo): DockerEngine {
  return { ping: async () => undefined, info: async () => info } as unknown as DockerEngine;
}

describe('an engine that would not hold the limits', () => {
  it('is refused before any sandbox starts, with the reason and the fix', async () => {
    const refused = await createDockerProvider({ engine: engineSaying(ROOTLESS_V1), sweep: false }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(SandboxFailure);
    expect(refused).toMatchObject({ code: 'limits_unenforced' });
    expect((refused as SandboxFailure).message).toMatch(/rootless on a cgroup v1 host/);
    expect((refused as SandboxFailure).fix).toMatch(/STEPBOX_ALLOW_UNENFORCED_LIMITS=1/);
  });

  let env: ReturnType<typeof tempHome>;
  afterEach(() => env?.cleanup());

  it("when allowed, is recorded in the episode's header and in its forks'", async () => {
    env = tempHome();
    const why = 'Podman runs rootless on a cgroup v1 host, where the limits are not enforced';
    // What the Docker provider hands out when the user allowed such an engine.
    const supply: SandboxSupply = {
      acquire: async (config) =>
        Object.assign(await memorySupply.acquire(config), { unenforcedLimits: why }) as Sandbox,
      release: (s) => memorySupply.release(s),
    };
    const lines = [call('write_file', { path: 'done.txt', content: 'ok' }), final('done')];
    const c = await startScripted(env, { task: memoryTask(), supply }, lines);
    await c.run();
    expect(env.store.readTrace(env.store.resolve(c.branch)).header).toMatchObject({ unenforced_limits: why });
    const f = await forkEpisode({
      id: c.branch,
      at: 1,
      agentSpec: `scripted:${script(env.dir, 'f.jsonl', [final('again')])}`,
      store: env.store,
      parts: env.parts,
      supply,
    });
    await f.run();
    expect(env.store.readTrace(env.store.resolve(f.branch)).header).toMatchObject({ unenforced_limits: why });
    await c.dispose?.();
    await f.dispose?.();
  });
});
