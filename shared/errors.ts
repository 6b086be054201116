import { z } from 'zod';
import { APP_ERROR_CODES } from './app-error.js';

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
export const AppErrorCode = z.enum(APP_ERROR_CODES);
/** One of the application error codes. */
export type AppErrorCode = z.infer<typeof AppErrorCode>;

/** An application error as data: crosses IPC, WebSocket and `--json` unchanged. */
export const AppError = z.object({ code: AppErrorCode, message: z.string() });
/** An application error as data. */
export type AppError = z.infer<typeof AppError>;

export { appError } from './app-error.js';
