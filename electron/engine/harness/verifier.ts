import { DEFAULT_VERIFIER_FILES_DIR, type Task, type WorkspaceFile } from '../../../shared/task.js';
import { PASSING_REWARD, readVerifierReward, type RewardFile } from '../../../shared/verifier-reward.js';
import type { VerifierResult } from '../../../shared/trace-events.js';
import { logger } from '../log.js';
import type { Sandbox } from '../sandbox/sandbox.js';

const log = logger('verifier');

/** A verifier that ran past its timeout, in words: what happened and what to change. */
function timedOut(seconds: number, rewardDir: boolean): { code: string; message: string } {
  return {
    code: 'timeout',
    message: `the verifier did not finish within its timeout (${seconds} s, "verifier.timeout" in the task) and was killed with every process it started${rewardDir ? '; no reward was read' : ''}: make its command finish sooner, or raise the timeout`,
  };
}

/**
 * Runs the task's verifier with cwd /workspace in a new shell (never the agent's session,
 * so `cd` or exported variables cannot sway it). A backend with its own verifier channel
 * (Docker: a separate exec after every process of the agent is killed) uses it, so nothing
 * the agent ran or left running can forge the outcome; `ran` records how it ran. Null when
 * there is no verifier or it could not run at all (the sandbox is gone).
 */
export async function runVerifier(task: Task, sandbox: Sandbox | null): Promise<VerifierResult | null> {
  if (!task.verifier || !sandbox) return null;
  const verifier = task.verifier;
  const timeoutMs = verifier.timeout * 1000;
  const ownDirs = verifier.files !== undefined || verifier.reward_dir !== undefined;
  try {
    if (sandbox.runVerifier) {
      const r = await sandbox.runVerifier({
        command: verifier.command,
        timeoutMs,
        ...(verifier.files
          ? {
              files: verifierFiles(verifier.files),
              filesDir: verifier.files_dir ?? DEFAULT_VERIFIER_FILES_DIR,
            }
          : {}),
        ...(verifier.reward_dir ? { rewardDir: verifier.reward_dir } : {}),
      });
      const ran = { channel: r.channel, uid: r.uid, killed: r.killed };
      if (r.stagingError !== undefined)
        return {
          success: false,
          exit_code: null,
          duration_ms: r.durationMs,
          ran,
          error: {
            code: 'verify_failed',
            message: `the verifier's files could not be put in place, so it did not run: ${r.stagingError}`,
          },
        };
      const result = {
        success: !r.timedOut && r.exitCode === 0,
        exit_code: r.exitCode,
        stdout: r.stdout,
        stderr: r.stderr,
        duration_ms: r.durationMs,
        ran,
        // Said as such: `exit_code: null` alone read like a verifier that could not start.
        ...(r.timedOut ? { error: timedOut(verifier.timeout, verifier.reward_dir !== undefined) } : {}),
      };
      return verifier.reward_dir && !r.timedOut
        ? withReward(result, verifier.reward_dir, r.rewardFiles ?? [])
        : result;
    }
    if (ownDirs) {
      // Files the agent must not see need the verifier's own channel: without one, none run.
      log.warn(
        'this sandbox has no verifier channel of its own; a verifier with files or a reward folder cannot run',
      );
      return null;
    }
    const r = await sandbox.exec({ command: task.verifier.command, timeoutMs, fresh: true });
    if (r.error?.code === 'sandbox_lost') return null;
    return {
      success: r.ok && r.exit_code === 0,
      exit_code: r.ok ? (r.exit_code ?? null) : null,
      stdout: r.stdout ?? '',
      stderr: r.error ? `${r.stderr ?? ''}${r.error.message}` : (r.stderr ?? ''),
      ...(r.duration_ms !== null ? { duration_ms: r.duration_ms } : {}),
      ran: { channel: 'session' },
      ...(r.error?.code === 'timeout' ? { error: timedOut(verifier.timeout, false) } : {}),
    };
  } catch (e) {
    // A sandbox that cannot run the verifier leaves it unknown: `verifier: null` in `end`.
    log.warn(`the verifier could not run: ${(e as Error).message}`);
    return null;
  }
}

/** A verifier's files as bytes (text, or `{base64}`). */
function verifierFiles(files: Readonly<Record<string, WorkspaceFile>>): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const [path, f] of Object.entries(files))
    out[path] = typeof f === 'string' ? Buffer.from(f, 'utf8') : Buffer.from(f.base64, 'base64');
  return out;
}

/**
 * The outcome of a verifier that writes its reward (Harbor's): the reward it wrote decides
 * (at least {@link PASSING_REWARD} passes; its exit code does not count, as in Harbor), and a
 * reward file that holds no number fails it with the file and what it held named.
 */
function withReward(result: VerifierResult, dir: string, files: readonly RewardFile[]): VerifierResult {
  const read = readVerifierReward(dir, files);
  if (!read.ok) return { ...result, success: false, error: read.error };
  return {
    ...result,
    success: read.value.reward >= PASSING_REWARD,
    reward: read.value.reward,
    reward_file: read.value.file,
    ...(read.value.rewards ? { rewards: { ...read.value.rewards } } : {}),
  };
}
