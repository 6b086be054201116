import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../../shared/median.js';
import { parseTask } from '../../shared/task.js';
import { copyFolderByTar, startLayerContainer } from '../engine/docker/baseline.js';
import { importFolder } from '../engine/harness/folder-import.js';
import { listWorkspaceFolder } from '../engine/harness/load-world.js';
import { DiskSnapshotStore } from '../engine/sandbox/disk-snapshot-store.js';
import { openEngine } from '../engine/open-engine.js';
import { defaultSandboxConfig } from '../engine/sandbox/limits.js';
import type { Sandbox } from '../engine/sandbox/sandbox.js';
import type { BenchSection } from './bench-section.js';
import { dockerPrerequisite } from './docker-prerequisite.js';

/** The project folder imported: 10,000 files of 10 KiB (100 MB, incompressible) in 100 folders. */
const FILES = 10_000;
const FILE_BYTES = 10 * 1024;
const RUNS = 3;
/** The goal of `workspace_import_ms` on this machine (issue 30). */
const TARGET_MS = 2000;

function makeFolder(root: string): void {
  for (let d = 0; d < 100; d++) mkdirSync(join(root, `d${d}`), { recursive: true });
  for (let i = 0; i < FILES; i++)
    writeFileSync(join(root, `d${i % 100}`, `f${i}.bin`), randomBytes(FILE_BYTES));
}

/**
 * Bench section `workspace`: a project folder into a sandbox's /workspace (`stepbox run DIR`,
 * `workspace.from`) — listed, hashed into a fresh snapshot store and restored, as an
 * episode's start does — side by side with `tar | docker cp` of the same folder into a
 * plain container directory (which cannot reach the /workspace tmpfs; the baseline only).
 */
export const section: BenchSection = {
  name: 'workspace',
  prerequisite: dockerPrerequisite,
  async run(log) {
    const work = await mkdtemp(join(tmpdir(), 'stepbox-bench-workspace-'));
    // Composed as the app's engine is (openEngine), on a throwaway home in the work folder.
    const engine = openEngine({ home: join(work, 'home'), sweep: false });
    const provider = await engine.provider();
    const docker = engine.docker();
    const importMs: number[] = [];
    // Its phases: the listing, the one pass (read, hash, store, stage into the sandbox), the restore.
    const listMs: number[] = [];
    const passMs: number[] = [];
    const restoreMs: number[] = [];
    const snapshotMs: number[] = [];
    const tarMs: number[] = [];
    try {
      const folder = join(work, 'project');
      makeFolder(folder);
      const task = parseTask({ name: 'bench', goal: 'bench', workspace: { from: folder } });
      if (!task.ok) throw new Error(task.error.message);
      const config = defaultSandboxConfig();
      for (let run = 0; run < RUNS; run++) {
        let sandbox: Sandbox | null = null;
        let container: string | null = null;
        try {
          sandbox = await provider.create(config);
          const store = new DiskSnapshotStore(join(work, `store-${run}`));
          const t0 = performance.now();
          const listing = listWorkspaceFolder(task.value, null);
          if (!listing.ok) throw new Error(listing.error.message);
          const tList = performance.now();
          const imported = await importFolder(listing.value, store, sandbox.stageAhead?.bind(sandbox));
          const tPass = performance.now();
          await sandbox.restore(imported.source, imported.manifest);
          const t1 = performance.now();
          listMs.push(tList - t0);
          passMs.push(tPass - tList);
          restoreMs.push(t1 - tPass);
          await sandbox.snapshot(store);
          const t2 = performance.now();
          if (imported.files !== FILES) throw new Error(`imported ${imported.files} files, not ${FILES}`);
          importMs.push(t1 - t0);
          snapshotMs.push(t2 - t1);
          container = await startLayerContainer(docker, config.image);
          const t3 = performance.now();
          await copyFolderByTar(docker, container, folder, '/workspace');
          tarMs.push(performance.now() - t3);
          log(
            `run ${run + 1}: import ${(t1 - t0).toFixed(0)} ms (list ${(tList - t0).toFixed(0)}, read/store/stage ${(tPass - tList).toFixed(0)}, restore ${(t1 - tPass).toFixed(0)}) (+ snapshot 0 ${(t2 - t1).toFixed(0)} ms), tar | docker cp ${tarMs[run].toFixed(0)} ms`,
          );
        } finally {
          await sandbox?.destroy();
          if (container) await docker.remove(container);
        }
      }
    } finally {
      await engine.close();
      await rm(work, { recursive: true, force: true });
    }
    const importMedian = median(importMs);
    return {
      workspace_import_files: FILES,
      workspace_import_bytes: FILES * FILE_BYTES,
      workspace_import_ms: importMedian,
      workspace_import_list_ms: median(listMs),
      workspace_import_pass_ms: median(passMs),
      workspace_import_restore_ms: median(restoreMs),
      workspace_import_snapshot0_ms: median(snapshotMs),
      workspace_import_tar_ms: median(tarMs),
      workspace_import_target_met: importMedian <= TARGET_MS,
    };
  },
};
