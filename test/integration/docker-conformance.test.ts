import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { createMemoryProvider } from '../support/memory-sandbox/provider.js';
import { describeDocker, useTestProvider } from '../support/docker.js';
import { CONFORMANCE_CONFIG, sandboxConformance } from '../support/sandbox-conformance.js';

// The same suite as test/unit/memory-sandbox.test.ts, on real containers with the disk store
// (helpers on the host's socket where it can be had, as in use).
describeDocker('docker backend', () => {
  const provider = useTestProvider();
  const storeRoot = mkdtempSync(join(tmpdir(), 'stepbox-conformance-'));
  let stores = 0;
  const docker = async () => provider();
  const store = () => new DiskSnapshotStore(join(storeRoot, String(stores++)));

  afterAll(async () => {
    rmSync(storeRoot, { recursive: true, force: true });
  });

  sandboxConformance('docker', docker, store);

  // Both backends describe a workspace the same way, so harness tests on the memory
  // backend exercise the very manifests a Docker episode records.
  it('restores snapshots across backends, both ways, with their recorded tree hashes', async () => {
    const s = store();
    const mem = await createMemoryProvider().create(CONFORMANCE_CONFIG);
    await mem.writeFile('a/b.txt', new TextEncoder().encode('hello'));
    await mem.writeFile('run.sh', new TextEncoder().encode('#!/bin/sh\n'), 0o755);
    await mem.exec({ command: 'mkdir -p empty && ln -s a/b.txt link', timeoutMs: 1000 });
    const fromMemory = await mem.snapshot(s);
    const box = await (await docker()).create(CONFORMANCE_CONFIG);
    try {
      const info = await box.restore(s, await s.getManifest(fromMemory.manifest), 'full');
      expect(info.treeHash).toBe(fromMemory.treeHash);
      await box.exec({ command: 'cd /workspace && echo hi > f && ln -s f l && mkdir e2', timeoutMs: 10_000 });
      const fromDocker = await box.snapshot(s);
      const back = await (
        await createMemoryProvider().create(CONFORMANCE_CONFIG)
      ).restore(s, await s.getManifest(fromDocker.manifest), 'full');
      expect(back.treeHash).toBe(fromDocker.treeHash);
    } finally {
      await box.destroy();
    }
  });
});

// The same suite with every helper on its exec: the channel where no socket can be had (a
// remote engine, Docker Desktop), so both channels keep the same behaviour.
describeDocker('docker backend, helper on its exec', () => {
  const provider = useTestProvider('exec');
  const storeRoot = mkdtempSync(join(tmpdir(), 'stepbox-conformance-exec-'));
  let stores = 0;

  afterAll(async () => {
    rmSync(storeRoot, { recursive: true, force: true });
  });

  sandboxConformance(
    'docker (exec channel)',
    async () => provider(),
    () => new DiskSnapshotStore(join(storeRoot, String(stores++))),
  );
});
