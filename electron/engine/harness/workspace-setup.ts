import { statSync } from 'node:fs';
import type { Task } from '../../../shared/task.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import { importFolder } from './folder-import.js';
import { emptySeed, overSeed } from '../sandbox/workspace-seed.js';
import type { SkippedPath } from './folder-listing.js';
import { listWorkspaceFolder } from './load-world.js';

/** The task's workspace could not be set up: the episode ends `error` / `setup_failed`. */
export class SetupFailure extends Error {
  override readonly name = 'SetupFailure';
}

/** What setting up the workspace left out. */
export interface WorkspaceSetup {
  /** Paths of the `from` folder not copied, and why (recorded as a warning). */
  readonly skipped: readonly SkippedPath[];
}

/**
 * Seeds the workspace of a new episode: the `from` folder (imported into the episode's
 * snapshot store and restored, see folder-import.ts), then the task's files written over
 * it, then its setup commands, each in a fresh shell with cwd the working directory. The
 * image's own files there (planted by the sandbox, see image-seed.ts) lie under the folder's. A folder that
 * cannot be imported, a file that cannot be written or a setup command that fails is a
 * `setup_failed` error naming it: the episode cannot start from a broken workspace.
 * Only a new episode reads the folder: a fork or replay restores the recorded snapshot 0.
 */
export async function writeWorkspace(
  sandbox: Sandbox,
  task: Task,
  store?: SnapshotStore,
  taskPath: string | null = null,
): Promise<WorkspaceSetup> {
  let skipped: readonly SkippedPath[] = [];
  if (task.workspace.from !== undefined) {
    if (!store) throw new SetupFailure('workspace.from: this episode has no snapshot store to import into');
    if (!isFolder(task.workspace.from))
      throw new SetupFailure(
        `workspace.from: ${task.workspace.from} is no longer a folder; restore it, or fork a recorded episode (forks restore its snapshot 0, never the folder)`,
      );
    // Listed again: the folder may have changed since the task was loaded (the limits hold still).
    const listing = listWorkspaceFolder(task, taskPath);
    if (!listing.ok) throw new SetupFailure(`workspace.from: ${listing.error.message}`);
    // Each chunk read goes into the sandbox at once (stageAhead), while the next is read.
    const imported = await importFolder(listing.value, store, sandbox.stageAhead?.bind(sandbox));
    skipped = imported.skipped;
    // Over the image's own files at the working directory, not instead of them.
    const seed = sandbox.workspaceSeed?.() ?? null;
    const manifest =
      seed && !emptySeed(seed) ? await overSeed(seed, imported.manifest, imported.source) : imported.manifest;
    try {
      await sandbox.restore(imported.source, manifest);
    } catch (e) {
      throw new SetupFailure(
        `workspace.from: cannot copy ${task.workspace.from} into the sandbox: ${(e as Error).message}`,
      );
    }
  }
  for (const [path, file] of Object.entries(task.workspace.files)) {
    const bytes = typeof file === 'string' ? Buffer.from(file, 'utf8') : Buffer.from(file.base64, 'base64');
    const written = await sandbox.writeFile(path, bytes);
    if (!written.ok) {
      throw new SetupFailure(`workspace.files: cannot write ${path}: ${written.error.message}`);
    }
  }
  for (const [i, command] of task.workspace.setup.entries()) {
    const r = await sandbox.exec({ command, timeoutMs: task.timeouts.step_hard * 1000, fresh: true });
    if (!r.ok || r.exit_code !== 0) {
      const why = r.error ? r.error.message : `exit ${r.exit_code}: ${(r.stderr ?? '').slice(0, 300)}`;
      throw new SetupFailure(`workspace.setup[${i}] (${command}) failed: ${why}`);
    }
  }
  return { skipped };
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
