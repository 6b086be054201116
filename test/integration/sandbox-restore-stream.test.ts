import { createHash } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { rawExec } from '../../electron/engine/docker/baseline.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import type { HelperResponse } from '../../electron/engine/sandbox/helper-client.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { treeHashOf } from '../../electron/engine/sandbox/manifest.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import type { ManifestEntry, SnapshotStore } from '../../electron/engine/sandbox/snapshot-store.js';
import { describeDocker, useTestProvider } from '../support/docker.js';

const MIB = 1024 * 1024;

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** `count` files of `size` bytes each, different content, under d/. */
function files(count: number, size: number, seed: string) {
  const blobs = Array.from({ length: count }, (_, i) => Buffer.alloc(size, `${seed}${i}`));
  const entries: ManifestEntry[] = [
    { path: 'd', type: 'dir', mode: 0o755, size: 0 },
    ...blobs.map((b, i): ManifestEntry => ({
      path: `d/f${i}`,
      type: 'file',
      mode: 0o644,
      size: b.length,
      hash: sha256(b),
    })),
  ];
  return { blobs, entries, manifest: { treeHash: treeHashOf(entries), entries } };
}

/** A store that hands out other bytes than it holds for `bad` (a damaged disk). */
function damaged(store: MemorySnapshotStore, bad: string): SnapshotStore {
  const flip = (b: Uint8Array) => {
    const out = Uint8Array.from(b);
    if (out.length) out[0] ^= 1;
    return out;
  };
  return Object.assign(Object.create(store) as MemorySnapshotStore, {
    getBlob: async (h: string) => (h === bad ? flip(await store.getBlob(h)) : store.getBlob(h)),
    readBlobRange: async (h: string, off: number, n: number) => {
      const b = (await store.getBlob(h)).subarray(off, off + n);
      return h === bad && off === 0 ? flip(b) : b;
    },
  });
}

describeDocker('restore: every blob checked as it is written', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;
  // Loosely typed on purpose: these tests send the helper what the host never would.
  let call: (op: string, args: object, payload?: Uint8Array) => Promise<HelperResponse<'restore'>>;

  beforeAll(async () => {
    sb = await provider().create(defaultSandboxConfig());
    call = (sb as unknown as { call: typeof call }).call.bind(sb);
  });

  async function workspace(): Promise<string> {
    const r = await sb.exec({ command: 'cd /workspace && find . | sort && cat keep.txt', timeoutMs: 10_000 });
    expect(r.exit_code).toBe(0);
    return r.stdout!;
  }

  it('refuses a blob whose bytes do not hash to its name, staged or inline, and changes nothing', async () => {
    await sb.exec({ command: 'echo before > /workspace/keep.txt', timeoutMs: 5_000 });
    const before = await workspace();
    // Staged (more than one chunk in all) and inline (small): the 3rd blob's bytes are wrong.
    for (const [count, size] of [
      [6, MIB],
      [5, 100],
    ]) {
      const { blobs, entries, manifest } = files(count, size, `${count}-`);
      const store = new MemorySnapshotStore();
      for (const b of blobs) await store.putBlob(sha256(b), b);
      await expect(sb.restore(damaged(store, entries[3].hash!), manifest)).rejects.toMatchObject({
        code: 'verify_failed',
        message: expect.stringMatching(
          new RegExp(`content sent for d/f2 \\(blob ${entries[3].hash!}\\) does not hash to its name`),
        ),
      });
      expect(await workspace()).toBe(before);
    }
  });

  it('refuses a staged blob whose bytes were replaced before the restore, even when its size is right', async () => {
    const { blobs, entries } = files(2, 1000, 'swap-');
    const [a, b] = [entries[1].hash!, entries[2].hash!];
    const before = await workspace();
    // Blob a's name, blob b's bytes (same size): the helper hashed what it wrote.
    await call('stage', { parts: [[a, 0, 1000]] }, blobs[1]);
    await call('stage', { parts: [[b, 0, 1000]] }, blobs[1]);
    await expect(
      call('restore', {
        entries: entries.map((e) => [e.path, e.type, e.mode, e.size, e.hash ?? null]),
        staged: [
          [a, 1000],
          [b, 1000],
        ],
        tree_hash: treeHashOf(entries),
      }),
    ).rejects.toMatchObject({ code: 'verify_failed', message: expect.stringContaining(`d/f0 (blob ${a})`) });
    expect(await workspace()).toBe(before);
  });

  it('takes the hashes it wrote when nothing else ran in the container, and reads back otherwise', async () => {
    const restore = async (seed: string, between?: () => Promise<unknown>) => {
      const { blobs, entries } = files(5, 1000, seed);
      await call('stage', { parts: entries.slice(1).map((e) => [e.hash, 0, e.size]) }, Buffer.concat(blobs));
      await between?.();
      const r = await call('restore', {
        entries: entries.map((e) => [e.path, e.type, e.mode, e.size, e.hash ?? null]),
        staged: entries.slice(1).map((e) => [e.hash, e.size]),
        tree_hash: treeHashOf(entries),
      });
      if ('need' in r.header) throw new Error(`the helper asked for ${r.header.need.join(', ')}`);
      expect(r.header.tree_hash).toBe(treeHashOf(entries));
      return r.header.reread;
    };
    expect(await restore('quiet-')).toBe(0);
    // A command that ran and ended between staging and the restore could have written
    // what was staged: seen by the pid count, so every file is read back.
    expect(await restore('cmd-', () => sb.exec({ command: '/bin/true', timeoutMs: 5_000 }))).toBe(5);
    // So is a call whose shell writes with builtins alone (no new process at all).
    expect(
      await restore('builtin-', () =>
        sb.exec({ command: 'echo x > /workspace/.stepbox-stage/forged', timeoutMs: 5_000 }),
      ),
    ).toBe(5);
    // A process alive during the restore that is no call of the helper's (a `docker exec` as
    // the sandbox user, as the window's terminal is): the same. (A root exec with no parent in
    // the container is the engine's own — the agent cannot make one — and is trusted.)
    const running = rawExec(provider().engine, sb.id, ['sleep', '60'], { user: '1000:1000' });
    await sb.exec({ command: "until pgrep -fx 'sleep 60' >/dev/null; do :; done", timeoutMs: 10_000 });
    expect(await restore('busy-')).toBe(5);
    expect(await rawExec(provider().engine, sb.id, ['pkill', '-fx', 'sleep 60'])).toBe(0);
    await running;
    expect(await restore('quiet-again-')).toBe(0);
  });

  it('blobs sent ahead (a folder import) are named, not sent again, by the next restore only; each is still checked inside', async () => {
    const { blobs, entries, manifest } = files(40, 200 * 1024, 'ahead-');
    const ahead = (bs: Buffer[], es: ManifestEntry[]) =>
      sb.stageAhead(
        es.slice(1).map((e) => [e.hash!, e.size] as const),
        Buffer.concat(bs),
      );
    // The store has none of them: the restore can only have them from what was sent ahead.
    await ahead(blobs, entries);
    const empty = new MemorySnapshotStore();
    await sb.restore(empty, manifest);
    const r = await sb.exec({ command: 'cat /workspace/d/f7 | sha256sum', timeoutMs: 10_000 });
    expect(r.stdout).toContain(entries[8].hash);
    // Sent ahead, then another restore in between: the stage is gone, so the one after
    // must send them itself (from a store without them it cannot, and says so).
    const next = files(3, 100, 'other-');
    await ahead(blobs, entries);
    const other = new MemorySnapshotStore();
    for (const b of next.blobs) await other.putBlob(sha256(b), b);
    await sb.restore(other, next.manifest);
    await expect(sb.restore(empty, manifest)).rejects.toMatchObject({ code: 'restore_failed' });
    // Bytes sent ahead that are not what their name says are refused like any staged blob.
    const bad = files(2, 1000, 'bad-');
    await sb.stageAhead(
      bad.entries.slice(1).map((e) => [e.hash!, e.size] as const),
      Buffer.concat([bad.blobs[0], Buffer.alloc(1000, 'x')]),
    );
    await expect(sb.restore(empty, bad.manifest)).rejects.toMatchObject({ code: 'verify_failed' });
  });

  it('takes blobs the host hashed from its own reads (hashedHere) by name; one continued with other bytes is refused as cut', async () => {
    const { blobs, entries, manifest } = files(30, 50 * 1024, 'named-');
    await sb.stageAhead(
      entries.slice(1).map((e) => [e.hash!, e.size] as const),
      Buffer.concat(blobs),
      true,
    );
    await sb.restore(new MemorySnapshotStore(), manifest);
    const r = await sb.exec({ command: 'cat /workspace/d/f29 | sha256sum', timeoutMs: 10_000 });
    expect(r.stdout).toContain(entries[30].hash);
    // Begun as the host's own bytes, continued from elsewhere: no hash stands for the whole.
    const mixed = files(1, 2000, 'mixed-');
    const h = mixed.entries[1].hash!;
    await call('stage', { parts: [[h, 0, 1000]], named: true }, mixed.blobs[0].subarray(0, 1000));
    await call('stage', { parts: [[h, 1000, 1000]] }, mixed.blobs[0].subarray(1000));
    await expect(
      call('restore', {
        entries: mixed.entries.map((e) => [e.path, e.type, e.mode, e.size, e.hash ?? null]),
        staged: [[h, 2000]],
        tree_hash: mixed.manifest.treeHash,
      }),
    ).rejects.toMatchObject({
      code: 'restore_failed',
      message: expect.stringContaining('not staged in order'),
    });
  });
});
