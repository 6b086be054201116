import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import type { DockerSandboxProvider } from '../../electron/engine/sandbox/docker-provider.js';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { closeTestProvider, dockerMissing, testProvider } from '../support/docker.js';
import { sandboxConformance } from '../support/sandbox-conformance.js';

// The same suite as test/unit/memory-sandbox.test.ts, on real containers with the disk store.
describe.skipIf(dockerMissing)('docker backend', () => {
  let provider: DockerSandboxProvider | undefined;
  const storeRoot = mkdtempSync(join(tmpdir(), 'stepbox-conformance-'));
  let stores = 0;

  afterAll(async () => {
    rmSync(storeRoot, { recursive: true, force: true });
    expect(await closeTestProvider(provider)).toEqual([]);
  });

  sandboxConformance(
    'docker',
    async () => (provider ??= await testProvider()),
    () => new DiskSnapshotStore(join(storeRoot, String(stores++))),
  );
});
