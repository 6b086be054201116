import type { AppError, AppErrorCode } from './errors.js';

// Apart from errors.ts so the window's entry can make and check errors without building zod
// schemas before its first render (issue 19.10); errors.ts makes its schema of this list.

/**
 * Error codes of operations outside a tool call (CLI, contract, engine services).
 * Kept apart from tool codes: these never reach an agent as an observation.
 */
export const APP_ERROR_CODES = [
  'usage',
  'invalid_task',
  'invalid_input',
  'docker_unreachable',
  /** The engine would not hold a sandbox's limits (rootless on cgroup v1) and the user did not allow that. */
  'limits_unenforced',
  'image_missing',
  'image_outdated',
  /** A task's Dockerfile (sandbox.build, a devcontainer's) did not build; the message quotes its last lines. */
  'build_failed',
  'network_unavailable',
  /** The task asks for a container runtime (sandbox.runtime, --runtime) the engine does not offer. */
  'runtime_unavailable',
  'sandbox_failed',
  'sandbox_lost',
  'snapshot_failed',
  'restore_failed',
  'verify_failed',
  /** A verifier's reward file holds no number (reward.txt) or no numeric reward (reward.json). */
  'reward_invalid',
  /** A verifier with a reward folder wrote neither reward.txt nor reward.json there. */
  'reward_missing',
  'not_found',
  'conflict',
  'busy',
  'model_error',
  /** The model did not answer within the step's hard timeout (retries included). */
  'model_timeout',
  /** A recorded task asks for a looser sandbox than the defaults; retry with the user's consent. */
  'consent_required',
  'script_error',
  'trace_corrupt',
  'snapshot_corrupt',
  'unauthorized',
  'cancelled',
  'timeout',
  'internal',
] as const;

/** Builds an {@link AppError}. */
export function appError(code: AppErrorCode, message: string): AppError {
  return { code, message };
}

/** True when `code` is one of the application error codes. */
export function isAppErrorCode(code: unknown): code is AppErrorCode {
  return typeof code === 'string' && (APP_ERROR_CODES as readonly string[]).includes(code);
}
