import type { Task } from '../../../shared/task.js';
import type { Sandbox } from '../sandbox/sandbox.js';

/** The task's workspace could not be set up: the episode ends `error` / `setup_failed`. */
export class SetupFailure extends Error {
  override readonly name = 'SetupFailure';
}

/**
 * Writes the task's workspace files and runs its setup commands, each in a fresh shell
 * with cwd /workspace. A file that cannot be written or a setup command that fails is a
 * `setup_failed` error naming it: the episode cannot start from a broken workspace.
 */
export async function writeWorkspace(sandbox: Sandbox, task: Task): Promise<void> {
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
}
