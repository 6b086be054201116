import { createHash } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { rawExec } from '../../electron/engine/docker/baseline.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import type { HelperResponse } from '../../electron/engine/sandbox/helper-client.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { treeHashOf } from '../../electron/engine/sandbox/manifest.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import type { ManifestEntry } from '../../electron/engine/sandbox/snapshot-store.js';
import { describeDocker, useTestProvider } from '../support/docker.js';

// A restore into an empty workspace (a fork's pooled sandbox) is a `fill`: each blob written
// straight to its paths as it arrives. It must yield exactly the snapshot's tree (modes, links,
// shared and multi-chunk content), refuse any workspace that is not empty or any container
// where a process of the agent's runs (the host then restores the usual way), and leave the
// workspace empty when it refuses content.

const MIB = 1024 * 1024;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A tree with what a fill must get right, its blobs in a store. */
async function tree() {
  const big = Buffer.alloc(6 * MIB + 5);
  for (let i = 0; i < big.length; i += 4096) big[i] = i & 0xff;
  const small = Buffer.from('small\n');
  const script = Buffer.from('#!/bin/sh\necho hi\n');
  const empty = Buffer.alloc(0);
  const file = (path: string, b: Buffer, mode = 0o644): ManifestEntry => ({
    path,
    type: 'file',
    mode,
    size: b.length,
    hash: sha256(b),
  });
  const entries: ManifestEntry[] = [
    { path: 'a', type: 'dir', mode: 0o755, size: 0 },
    { path: 'a/b', type: 'dir', mode: 0o555, size: 0 },
    file('a/b/big', big),
    file('a/b/big-again', big, 0o600),
    file('a/b/run.sh', script, 0o755),
    file('a/empty', empty),
    { path: 'a/link', type: 'symlink', mode: 0o777, size: 5, target: 'b/big' },
    file('one', small),
    file('two', small, 0o400),
  ];
  const store = new MemorySnapshotStore();
  for (const b of [big, small, script, empty]) await store.putBlob(sha256(b), b);
  return { entries, store, manifest: { treeHash: treeHashOf(entries), entries }, big };
}

describeDocker('restore into an empty workspace (fill)', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;
  // Loosely typed on purpose: these tests send the helper what the host never would.
  let call: (op: string, args: object, payload?: Uint8Array) => Promise<HelperResponse<'fill'>>;

  beforeEach(async () => {
    sb = await provider().create(defaultSandboxConfig());
    call = (sb as unknown as { call: typeof call }).call.bind(sb);
  });

  async function listing(): Promise<string> {
    const r = await sb.exec({
      command: "cd /workspace && find . -printf '%p %M %s %l\\n' | sort && sha256sum a/b/big a/b/big-again",
      timeoutMs: 20_000,
    });
    expect(r.exit_code).toBe(0);
    return r.stdout!;
  }

  it('puts the exact tree in place, the same as the usual restore into a workspace that held something', async () => {
    const { store, manifest, big } = await tree();
    const r = await sb.restore(store, manifest);
    expect(r.treeHash).toBe(manifest.treeHash);
    const filled = await listing();
    expect(filled).toContain(`${sha256(big)}  a/b/big-again`);
    expect(filled).toMatch(/^\.\/a\/b dr-xr-xr-x /m);
    expect(filled).toMatch(/^\.\/a\/link lrwxrwxrwx 5 b\/big$/m);
    expect(filled).toMatch(/^\.\/two -r-------- 6 $/m);
    // A snapshot of it is the same tree (rehashed inside from what is on disk).
    const again = await sb.snapshot(new MemorySnapshotStore());
    expect(again.treeHash).toBe(manifest.treeHash);
    // The usual restore into a workspace that has something puts the same tree there.
    const other = await provider().create(defaultSandboxConfig());
    try {
      await other.exec({ command: 'touch /workspace/x', timeoutMs: 5_000 });
      expect((await other.restore(store, manifest)).treeHash).toBe(manifest.treeHash);
      const o = await other.exec({
        command: "cd /workspace && find . -printf '%p %M %s %l\\n' | sort && sha256sum a/b/big a/b/big-again",
        timeoutMs: 20_000,
      });
      expect(o.stdout).toBe(filled);
    } finally {
      await other.destroy();
    }
  });

  it('hashes a payload once on the host and names it to the helper; a payload that does not check goes unnamed and is refused inside', async () => {
    const { entries, store, manifest } = await tree();
    // The fill requests as they leave the host (the instance's call, wrapped).
    const sent: { op: string; args: Record<string, unknown> }[] = [];
    const own = sb as unknown as {
      call: (op: string, args: Record<string, unknown>, ...rest: unknown[]) => unknown;
    };
    const real = own.call.bind(sb);
    own.call = (op, args, ...rest) => {
      sent.push({ op, args });
      return real(op, args, ...rest);
    };
    const fills = () => sent.filter((r) => r.op === 'fill' && (r.args.parts as unknown[]).length);
    expect((await sb.restore(store, manifest)).treeHash).toBe(manifest.treeHash);
    expect(fills().length).toBeGreaterThan(1);
    expect(fills().every((r) => r.args.named === true)).toBe(true);
    // A store that hands out other bytes for a small blob than its name says (a damaged disk):
    // the host's check fails, so that payload goes unnamed and the helper refuses it as ever.
    await sb.reset();
    sent.length = 0;
    const victim = entries.find((e) => e.path === 'one')!.hash!;
    const damaged = Object.assign(Object.create(store) as MemorySnapshotStore, {
      readBlobRange: async (h: string, off: number, n: number) => {
        const b = Uint8Array.from((await store.getBlob(h)).subarray(off, off + n));
        if (h === victim) b[0] ^= 1;
        return b;
      },
    });
    await expect(sb.restore(damaged, manifest)).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining(`(blob ${victim}) does not hash to its name`),
    });
    const withVictim = fills().find((r) => (r.args.parts as [string][]).some((p) => p[0] === victim));
    expect(withVictim?.args.named).toBeUndefined();
    expect((await sb.exec({ command: 'ls -A /workspace | wc -l', timeoutMs: 5_000 })).stdout).toBe('0\n');
  });

  const wire = (es: readonly ManifestEntry[]) =>
    es.map((e) => [
      e.path,
      e.type,
      e.mode,
      e.size,
      e.type === 'file' ? e.hash : e.type === 'symlink' ? e.target : null,
    ]);
  /** One whole part per distinct blob under 1 MiB. */
  const whole = (es: readonly ManifestEntry[]) =>
    [...new Set(es.filter((e) => e.type === 'file' && e.size < MIB).map((e) => e.hash!))].map((h) => [
      h,
      0,
      es.find((e) => e.hash === h)!.size,
    ]);

  it('answers with the hash recomputed inside, and reads back every file when a process ran meanwhile', async () => {
    const { entries, store } = await tree();
    const few = entries.filter((e) => e.path === 'one' || e.path === 'two');
    const parts = [[few[0].hash, 0, few[0].size]];
    const payload = await store.getBlob(few[0].hash!);
    const quiet = await call(
      'fill',
      { entries: wire(few), tree_hash: treeHashOf(few), parts, last: true },
      payload,
    );
    expect(quiet.header).toMatchObject({ tree_hash: treeHashOf(few), reread: 0 });
    await sb.reset();
    await call('fill', { entries: wire(few), tree_hash: treeHashOf(few), parts: [] });
    await sb.exec({ command: '/bin/true', timeoutMs: 5_000 });
    const busy = await call('fill', { parts, last: true }, payload);
    expect(busy.header).toMatchObject({ tree_hash: treeHashOf(few), reread: null });
  });

  it('refuses a workspace that holds anything, or a container where a process of the agent runs, changing nothing', async () => {
    const { entries } = await tree();
    const request = { entries: wire(entries), tree_hash: treeHashOf(entries), parts: [] };
    await sb.exec({ command: 'echo mine > /workspace/keep', timeoutMs: 5_000 });
    await expect(call('fill', request)).rejects.toMatchObject({ code: 'not_pristine' });
    expect(
      (await sb.exec({ command: 'ls -A /workspace; cat /workspace/keep', timeoutMs: 5_000 })).stdout,
    ).toBe('keep\nmine\n');
    await sb.reset();
    const running = rawExec(provider().engine, sb.id, ['sleep', '60'], { user: '1000:1000' });
    await sb.exec({ command: "until pgrep -fx 'sleep 60' >/dev/null; do :; done", timeoutMs: 10_000 });
    await expect(call('fill', request)).rejects.toMatchObject({ code: 'not_pristine' });
    expect(await rawExec(provider().engine, sb.id, ['pkill', '-fx', 'sleep 60'])).toBe(0);
    await running;
    // A part with no fill under way (its first request names the tree) is refused too.
    await expect(call('fill', { parts: [], last: true })).rejects.toMatchObject({
      code: 'invalid_arguments',
    });
    // Entries that leave /workspace, as for any restore.
    await expect(
      call('fill', {
        entries: [['../x', 'file', 0o644, 1, 'a'.repeat(64)]],
        tree_hash: 'a'.repeat(64),
        parts: [],
      }),
    ).rejects.toMatchObject({ code: 'invalid_manifest' });
  });

  it('refuses content that does not hash to its name, whole or over several chunks, and leaves the workspace empty', async () => {
    const { entries, store } = await tree();
    const empty = async () =>
      expect((await sb.exec({ command: 'ls -A /workspace | wc -l', timeoutMs: 5_000 })).stdout).toBe('0\n');
    const request = { entries: wire(entries), tree_hash: treeHashOf(entries) };
    const small = whole(entries);
    const smallBytes = Buffer.concat(await Promise.all(small.map((p) => store.getBlob(p[0] as string))));
    const bad = Buffer.from(smallBytes);
    bad[0] ^= 1;
    await expect(call('fill', { ...request, parts: small }, bad)).rejects.toMatchObject({
      code: 'verify_failed',
      message: expect.stringContaining('does not hash to its name'),
    });
    await empty();
    // The 6 MiB blob in two parts, its second damaged.
    const bigHash = entries.find((e) => e.path === 'a/b/big')!.hash!;
    const big = Buffer.from(await store.getBlob(bigHash));
    await call(
      'fill',
      { ...request, parts: [...small, [bigHash, 0, 4 * MIB]] },
      Buffer.concat([smallBytes, big.subarray(0, 4 * MIB)]),
    );
    const rest = Buffer.from(big.subarray(4 * MIB));
    rest[rest.length - 1] ^= 1;
    await expect(
      call('fill', { parts: [[bigHash, 4 * MIB, rest.length]], last: true }, rest),
    ).rejects.toMatchObject({
      code: 'verify_failed',
    });
    await empty();
    // Sent whole but cut short: the last request finds a blob missing.
    await call('fill', { ...request, parts: small }, smallBytes);
    await expect(call('fill', { parts: [], last: true })).rejects.toMatchObject({ code: 'restore_failed' });
    await empty();
  });
});
