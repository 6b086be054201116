import type { Task } from '../../../shared/task.js';
import type { VerifierResult } from '../../../shared/trace-events.js';
import { logger } from '../log.js';
import type { Sandbox } from '../sandbox/sandbox.js';

const log = logger('verifier');

/**
 * Runs the task's verifier with cwd /workspace in a new shell (never the agent's session,
 * so `cd` or exported variables cannot sway it). A backend with its own verifier channel
 * (Docker: a separate exec after every process of the agent is killed) uses it, so nothing
 * the agent ran or left running can forge the outcome; `ran` records how it ran. Null when
 * there is no verifier or it could not run at all (the sandbox is gone).
 */
export async function runVerifier(task: Task, sandbox: Sandbox | null): Promise<VerifierResult | null> {
  if (!task.verifier || !sandbox) return null;
  const timeoutMs = task.verifier.timeout * 1000;
  try {
    if (sandbox.runVerifier) {
      const r = await sandbox.runVerifier({ command: task.verifier.command, timeoutMs });
      return {
        success: !r.timedOut && r.exitCode === 0,
        exit_code: r.exitCode,
        stdout: r.stdout,
        stderr: r.stderr,
        duration_ms: r.durationMs,
        ran: { channel: r.channel, uid: r.uid, killed: r.killed },
      };
    }
    const r = await sandbox.exec({ command: task.verifier.command, timeoutMs, fresh: true });
    if (r.error?.code === 'sandbox_lost') return null;
    return {
      success: r.ok && r.exit_code === 0,
      exit_code: r.ok ? (r.exit_code ?? null) : null,
      stdout: r.stdout ?? '',
      stderr: r.error ? `${r.stderr ?? ''}${r.error.message}` : (r.stderr ?? ''),
      duration_ms: r.duration_ms,
      ran: { channel: 'session' },
    };
  } catch (e) {
    // A sandbox that cannot run the verifier leaves it unknown: `verifier: null` in `end`.
    log.warn(`the verifier could not run: ${(e as Error).message}`);
    return null;
  }
}
