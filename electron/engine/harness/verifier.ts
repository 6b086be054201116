import type { Task } from '../../../shared/task.js';
import type { VerifierResult } from '../../../shared/trace-events.js';
import type { Sandbox } from '../sandbox/sandbox.js';

/**
 * Runs the task's verifier in a new shell with cwd /workspace (never the agent's session,
 * so `cd` or exported variables cannot sway it). Null when there is no verifier or it
 * could not run at all (the sandbox is gone).
 */
export async function runVerifier(task: Task, sandbox: Sandbox | null): Promise<VerifierResult | null> {
  if (!task.verifier || !sandbox) return null;
  try {
    const r = await sandbox.exec({
      command: task.verifier.command,
      timeoutMs: task.verifier.timeout * 1000,
      fresh: true,
    });
    if (r.error?.code === 'sandbox_lost') return null;
    return {
      success: r.ok && r.exit_code === 0,
      exit_code: r.ok ? (r.exit_code ?? null) : null,
      stdout: r.stdout ?? '',
      stderr: r.error ? `${r.stderr ?? ''}${r.error.message}` : (r.stderr ?? ''),
      duration_ms: r.duration_ms,
    };
  } catch {
    // A sandbox that cannot run the verifier leaves it unknown: `verifier: null` in `end`.
    return null;
  }
}
