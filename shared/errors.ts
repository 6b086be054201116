import { z } from 'zod';

/**
 * The closed set of error codes a tool call can return. A program branches on the code;
 * the message next to it is for a person. Extending this enum is a contract change.
 */
export const ToolErrorCode = z.enum([
  'invalid_arguments',
  'unknown_tool',
  'timeout',
  'oom',
  'disk_full',
  'not_found',
  'permission_denied',
  'is_directory',
  'not_a_directory',
  'binary_file',
  'session_restarted',
  'sandbox_lost',
  'network_unavailable',
  'tool_failed',
  'cancelled',
  'internal_error',
]);
/** One of the closed tool error codes. */
export type ToolErrorCode = z.infer<typeof ToolErrorCode>;

/** A structured tool error: `code` to branch on, `message` to act on. */
export const ToolError = z.object({ code: ToolErrorCode, message: z.string() });
/** A structured tool error. */
export type ToolError = z.infer<typeof ToolError>;

/**
 * Error codes of operations outside a tool call (CLI, contract, engine services).
 * Kept apart from tool codes: these never reach an agent as an observation.
 */
export const AppErrorCode = z.enum([
  'usage',
  'invalid_task',
  'invalid_input',
  'docker_unreachable',
  /** The engine would not hold a sandbox's limits (rootless on cgroup v1) and the user did not allow that. */
  'limits_unenforced',
  'image_missing',
  'image_outdated',
  'network_unavailable',
  'sandbox_failed',
  'sandbox_lost',
  'snapshot_failed',
  'restore_failed',
  'verify_failed',
  'not_found',
  'conflict',
  'busy',
  'model_error',
  /** The model did not answer within the step's hard timeout (retries included). */
  'model_timeout',
  /** A recorded task asks for wider isolation than the defaults; retry with the user's consent. */
  'consent_required',
  'script_error',
  'trace_corrupt',
  'snapshot_corrupt',
  'unauthorized',
  'cancelled',
  'timeout',
  'internal',
]);
/** One of the application error codes. */
export type AppErrorCode = z.infer<typeof AppErrorCode>;

/** An application error as data: crosses IPC, WebSocket and `--json` unchanged. */
export const AppError = z.object({ code: AppErrorCode, message: z.string() });
/** An application error as data. */
export type AppError = z.infer<typeof AppError>;

/** Builds an {@link AppError}. */
export function appError(code: AppErrorCode, message: string): AppError {
  return { code, message };
}
