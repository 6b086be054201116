import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { DockerEngine } from '../../electron/engine/docker/client.js';
import { containerSpec } from '../../electron/engine/docker/container-spec.js';
import { currentOwner, ownerGone, ownerLabel, sweepOrphans } from '../../electron/engine/docker/owner.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { processStartTime } from '../../electron/engine/process-identity.js';
import { useTestProvider, describeDocker } from '../support/docker.js';

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync('true').pid!;
}

describe('owner liveness', () => {
  const me = currentOwner();

  it('keeps containers of this process and of another live process', () => {
    expect(ownerGone(ownerLabel(me))).toBe(false);
    expect(
      ownerGone(ownerLabel({ ...me, pid: process.ppid, start_time: processStartTime(process.ppid) })),
    ).toBe(false);
  });

  it('judges an owner gone after a reboot, when its pid is dead, or when its pid was reused', () => {
    expect(ownerGone(ownerLabel({ ...me, boot_id: 'another-boot' }))).toBe(true);
    expect(ownerGone(ownerLabel({ ...me, pid: deadPid() }))).toBe(true);
    expect(ownerGone(ownerLabel({ ...me, start_time: String(Number(me.start_time) + 1) }))).toBe(true);
    expect(ownerGone('not json')).toBe(true);
  });

  it('reads the owner labels of earlier versions (numeric start, boot id "unknown")', () => {
    const legacy = (o: object) => JSON.stringify({ host: me.host, boot_id: me.boot_id, pid: me.pid, ...o });
    expect(ownerGone(legacy({ start: Number(me.start_time) }))).toBe(false);
    expect(ownerGone(legacy({ start: Number(me.start_time) + 1 }))).toBe(true);
    expect(ownerGone(legacy({ pid: deadPid(), start: 1 }))).toBe(true);
    expect(ownerGone(legacy({ boot_id: 'unknown', start: Number(me.start_time) }))).toBe(false);
  });

  it('never judges an owner on another host', () => {
    expect(ownerGone(ownerLabel({ ...me, host: `${me.host}-elsewhere`, pid: deadPid() }))).toBe(false);
  });
});

describeDocker('orphan sweep on docker', () => {
  const provider = useTestProvider();
  const engine = new DockerEngine();
  const orphanIds: string[] = [];

  afterAll(async () => {
    await Promise.all(orphanIds.map((id) => engine.remove(id)));
  });

  it('removes only containers whose owner is gone', async () => {
    const mine = await provider().create(defaultSandboxConfig());
    const dead = ownerLabel({ ...currentOwner(), pid: deadPid() });
    const orphan = await engine.createAndStart(containerSpec(defaultSandboxConfig(), dead));
    orphanIds.push(orphan);
    const removed = await sweepOrphans(engine);
    expect(removed).toContain(orphan);
    expect(removed).not.toContain(mine.id);
    expect(await engine.isRunning(orphan)).toBe(false);
    expect(await engine.isRunning(mine.id)).toBe(true);
    expect((await mine.exec({ command: 'echo still here', timeoutMs: 5_000 })).stdout).toBe('still here\n');
  });

  it('destroys idempotently: an already-removed container counts as destroyed', async () => {
    const sb = await provider().create(defaultSandboxConfig());
    await engine.remove(sb.id);
    await expect(sb.destroy()).resolves.toBeUndefined();
    await expect(sb.destroy()).resolves.toBeUndefined();
    await expect(sb.exec({ command: 'true', timeoutMs: 1_000 })).rejects.toMatchObject({
      code: 'sandbox_lost',
    });
  });

  it('survives a command that kills every process it can: the container and the helper are not its', async () => {
    const sb = await provider().create(defaultSandboxConfig());
    // kill(-1) spares its caller: the shell goes on, everything else of uid 1000 is gone.
    const r = await sb.exec({ command: 'sleep 60 & kill -9 -1; echo still-here', timeoutMs: 5_000 });
    expect(r).toMatchObject({ ok: true, exit_code: 0, stdout: 'still-here\n' });
    expect(await engine.isRunning(sb.id)).toBe(true);
    expect(await sb.exec({ command: 'echo next; pgrep -c sleep', timeoutMs: 5_000 })).toMatchObject({
      ok: true,
      stdout: 'next\n1\n',
    });
    await sb.destroy();
  });

  it('reports sandbox_lost when the container disappears under a live sandbox', async () => {
    const sb = await provider().create(defaultSandboxConfig());
    await engine.remove(sb.id);
    await expect(sb.exec({ command: 'true', timeoutMs: 1_000 })).rejects.toMatchObject({
      code: 'sandbox_lost',
    });
    await sb.destroy();
  });
});
