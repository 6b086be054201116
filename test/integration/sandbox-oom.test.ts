import { afterAll, beforeAll, expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { containerSpec, STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { ensureRuntimeVolume } from '../../electron/engine/docker/runtime-volume.js';
import { OomEvents } from '../../electron/engine/docker/oom.js';
import { ownerLabel } from '../../electron/engine/docker/owner.js';
import { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import type { Sandbox } from '../../electron/engine/sandbox/sandbox.js';
import { useTestProvider, describeDocker } from '../support/docker.js';

// Its calls get 90 s: reclaim before the OOM kill took over 30 s at load 20 (a full parallel run).
const HOG = 'python3 -c "b=[]\nwhile True: b.append(bytearray(16*1024*1024))"';
const config = defaultSandboxConfig({ memory: '128m', pids: 64 });

/** What the helper's cgroup counter says, and what Docker's `oom` event says (docker-sandbox.ts). */
const BY_COUNTER = /the kernel killed it/;
const BY_EVENT = /Docker reported an OOM kill/;

describeDocker('oom detection: cgroup counter first, Docker event as the fallback', () => {
  const engine = new DockerEngine();
  const events = new OomEvents();
  const provider = useTestProvider();
  let counted: Sandbox;
  let masked: DockerSandbox;

  beforeAll(async () => {
    counted = await provider().create(config);
    // A container that cannot see its cgroup files (as under cgroup v2 without a private
    // namespace): the helper has no counter, so only the Docker event can tell an OOM kill.
    await events.watch(engine, `${STEPBOX_LABEL}=1`);
    const runtime = await ensureRuntimeVolume(engine, config.image);
    const spec = containerSpec(config, ownerLabel(), undefined, undefined, runtime);
    const id = await engine.createAndStart({
      ...spec,
      HostConfig: {
        ...spec.HostConfig,
        Tmpfs: { ...spec.HostConfig?.Tmpfs, '/sys/fs/cgroup': 'ro,size=4k' },
      },
    });
    masked = new DockerSandbox(engine, id, config, { ooms: events, onDestroy: (cid) => events.forget(cid) });
    await masked.start();
  });

  afterAll(async () => {
    events.close();
    await masked?.destroy();
  });

  it('the counter names the OOM kill when the helper can read it', async () => {
    const r = await counted.exec({ command: HOG, timeoutMs: 90_000 });
    expect(r).toMatchObject({ ok: false, error: { code: 'oom', message: BY_COUNTER }, exit_code: 137 });
  });

  it('the Docker event names it when the cgroup files are hidden', async () => {
    const probe = await masked.exec({ command: 'ls -A /sys/fs/cgroup | wc -l', timeoutMs: 5_000 });
    expect(probe.stdout).toBe('0\n');
    const seen = events.count(masked.id);
    const r = await masked.exec({ command: HOG, timeoutMs: 90_000 });
    expect(r).toMatchObject({ ok: false, error: { code: 'oom', message: BY_EVENT }, exit_code: 137 });
    expect(events.count(masked.id)).toBeGreaterThan(seen);
  });

  it('without the counter, a SIGKILL that no OOM event follows is a plain exit 137', async () => {
    const r = await masked.exec({ command: 'kill -9 $$', timeoutMs: 5_000 });
    expect(r).toMatchObject({ ok: true, exit_code: 137 });
    expect(r.error).toBeUndefined();
  });
});
