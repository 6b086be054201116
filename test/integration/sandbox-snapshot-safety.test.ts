import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { HelperError, type HelperResponse } from '../../electron/engine/sandbox/helper-client.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { treeHashOf } from '../../electron/engine/sandbox/manifest.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import type { ManifestEntry } from '../../electron/engine/sandbox/snapshot-store.js';
import { describeDocker, useTestProvider } from '../support/docker.js';

const MIB = 1024 * 1024;
const HASH_OF_X = '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881';

/** A manifest with its true tree hash (so only the path rules can refuse it). */
function manifestOf(entries: ManifestEntry[]) {
  return { treeHash: treeHashOf(entries), entries };
}

/** Runs in the sandbox and returns stdout; the command must succeed. */
async function sh(sb: DockerSandbox, command: string, timeoutMs = 60_000): Promise<string> {
  const r = await sb.exec({ command, timeoutMs });
  expect(r.error).toBeUndefined();
  return r.stdout ?? '';
}

describeDocker('snapshot safety: paths, large files, a full disk', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;
  let tmp: string;

  beforeAll(async () => {
    sb = await provider().create(defaultSandboxConfig());
    tmp = mkdtempSync(join(tmpdir(), 'stepbox-snap-safety-'));
  });

  afterAll(async () => {
    rmSync(tmp, { recursive: true, force: true });
  });

  it('refuses to restore entries that leave /workspace, writing nothing', async () => {
    const store = new MemorySnapshotStore();
    await store.putBlob(HASH_OF_X, Buffer.from('x'));
    const x = (path: string): ManifestEntry => ({
      path,
      type: 'file',
      mode: 0o644,
      size: 1,
      hash: HASH_OF_X,
    });
    const cases: [ManifestEntry[], RegExp][] = [
      [[x('../home/agent/.bashrc')], /"\.\.\/home\/agent\/\.bashrc" is not a plain relative path/],
      [[x('/home/agent/.bashrc')], /"\/home\/agent\/\.bashrc" is an absolute path/],
      [
        [{ path: 'l', type: 'symlink', mode: 0o777, size: 11, target: '/home/agent' }, x('l/.bashrc')],
        /"l\/\.bashrc" lies below "l", a symlink in the manifest/,
      ],
    ];
    for (const [entries, why] of cases) {
      await expect(sb.restore(store, manifestOf(entries))).rejects.toMatchObject({
        code: 'restore_failed',
        message: expect.stringMatching(why),
      });
    }
    expect(await sh(sb, 'find /home/agent /tmp -mindepth 1 | wc -l')).toBe('0\n');
  });

  it('refuses them inside the container too, when the host check is bypassed', async () => {
    const call = (sb as unknown as { call(op: string, args: object): Promise<HelperResponse> }).call.bind(sb);
    for (const path of ['../home/agent/x', '/tmp/x', 'a/../../x'])
      await expect(
        call('restore', { entries: [[path, 'file', 0o644, 1, HASH_OF_X]], staged: [], tree_hash: '' }),
      ).rejects.toEqual(expect.any(HelperError));
    await expect(
      call('restore', {
        entries: [
          ['l', 'symlink', 0o777, 11, '/home/agent'],
          ['l/x', 'file', 0o644, 1, HASH_OF_X],
        ],
        staged: [],
        tree_hash: '',
      }),
    ).rejects.toMatchObject({
      code: 'invalid_manifest',
      message: expect.stringMatching(/'l\/x' lies below 'l'/),
    });
    expect(await sh(sb, 'find /home/agent /tmp -mindepth 1 | wc -l')).toBe('0\n');
  });

  it('refuses a delta restore that leaves an entry below a non-directory (the helper checks only what the delta changed)', async () => {
    await sh(sb, 'cd /workspace && mkdir -p d && echo x > d/f && echo y > g');
    await sb.snapshot(new MemorySnapshotStore());
    const base = (sb as unknown as { base: { id: string } }).base.id;
    const call = (sb as unknown as { call(op: string, args: object): Promise<HelperResponse> }).call.bind(sb);
    const delta = (changed: unknown[], removed: string[]) =>
      call('restore', { base, changed, removed, staged: [], tree_hash: '' });
    const cases: [unknown[], string[], RegExp][] = [
      // A changed entry under a parent the tree lacks, or under a file of the base.
      [[['nodir/x', 'file', 0o644, 1, HASH_OF_X]], [], /'nodir\/x' lies below 'nodir'/],
      [[['g/x', 'file', 0o644, 1, HASH_OF_X]], [], /'g\/x' lies below 'g'/],
      // A directory of the base removed, or made a symlink, with an unchanged entry still below it.
      [[], ['d'], /'d\/f' lies below 'd'/],
      [[['d', 'symlink', 0o777, 11, '/home/agent']], [], /'d\/f' lies below 'd'/],
    ];
    for (const [changed, removed, why] of cases)
      await expect(delta(changed, removed)).rejects.toMatchObject({
        code: 'invalid_manifest',
        message: expect.stringMatching(why),
      });
    expect(await sh(sb, 'cat /workspace/d/f /workspace/g; ls -A /home/agent; echo end')).toBe('x\ny\nend\n');
    await sh(sb, 'rm -rf /workspace/*');
  });

  it('never follows a symlink the workspace has where the snapshot has a directory', async () => {
    await sh(sb, 'cd /workspace && mkdir -p d && echo x > d/f');
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store);
    await sh(sb, 'cd /workspace && rm -rf d && ln -s /home/agent d');
    const restored = await sb.restore(store, await store.getManifest(snap.manifest));
    expect(restored.treeHash).toBe(snap.treeHash);
    expect(
      await sh(sb, 'test -d /workspace/d && ! test -L /workspace/d && cat d/f; ls -A /home/agent; echo end'),
    ).toBe('x\nend\n');
    await sh(sb, 'rm -rf /workspace/*');
  });

  it('records a file over the per-file cap as skipped, capturing everything else', async () => {
    await sh(sb, 'cd /workspace && head -c 2097152 /dev/zero > big && echo small > small');
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store, { fileCapBytes: MIB });
    expect(snap.skipped).toEqual([{ path: 'big', size: 2 * MIB }]);
    const manifest = await store.getManifest(snap.manifest);
    expect(manifest.entries.map((e) => e.path)).toEqual(['small']);
    // Under the default cap it is captured like any file.
    expect((await sb.snapshot(store)).skipped).toBeUndefined();
    await sh(sb, 'rm -rf /workspace/*');
  });

  it('reports disk_full, not oom, when a command fills /workspace', async () => {
    const small = await provider().create(defaultSandboxConfig({ memory: '64m', disk: '16m' }));
    try {
      const r = await small.exec({ command: 'head -c 64M /dev/zero > /workspace/fill', timeoutMs: 30_000 });
      expect(r.error).toMatchObject({ code: 'disk_full' });
      expect(await small.exec({ command: 'rm /workspace/fill; echo freed', timeoutMs: 5_000 })).toMatchObject(
        {
          ok: true,
          stdout: 'freed\n',
        },
      );
    } finally {
      await small.destroy();
    }
  });

  it('snapshots and restores a 320 MB file in bounded chunks: host memory stays far below its size', async () => {
    // Not urandom: generating it costs more than everything measured here.
    await sh(sb, 'yes stepbox | head -c 335544320 > /workspace/huge && echo a > /workspace/a', 120_000);
    const store = new DiskSnapshotStore(join(tmp, 'store'));
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      // The helper is killed from outside half-way: the capture starts over and stays whole.
      const killer = setTimeout(() => {
        void provider()
          .engine.exec(sb.id, ['pkill', '-9', '-u', '0', '-f', 'stepbox-helper'], { user: '0:0' })
          .then((s) => s.stdout.resume());
      }, 300);
      const snap = await sb.snapshot(store);
      clearTimeout(killer);
      const manifest = await store.getManifest(snap.manifest);
      expect(manifest.entries.find((e) => e.path === 'huge')?.size).toBe(335_544_320);
      expect(snap.treeHash).toBe(treeHashOf(manifest.entries));
      const fresh = await provider().create(defaultSandboxConfig());
      try {
        const restored = await fresh.restore(store, manifest);
        expect(restored.treeHash).toBe(snap.treeHash);
        expect(await sh(fresh, 'sha256sum /workspace/huge | cut -c1-64')).toBe(
          `${manifest.entries.find((e) => e.path === 'huge')!.hash}\n`,
        );
      } finally {
        await fresh.destroy();
      }
    } finally {
      clearInterval(sampler);
      await sh(sb, 'rm -rf /workspace/*');
    }
    // Generous: a whole-file buffer would be 320 MB (and a join of its chunks twice that).
    expect(peak - before).toBeLessThan(160 * MIB);
  }, 300_000);
});
