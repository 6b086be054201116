import { AppErrorCode, appError, type AppError } from '../../shared/errors.js';

/** A service failure with an application error code; crosses the contract as data. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly code: AppErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const AGENT_CODES: Record<string, AppErrorCode> = {
  script_exhausted: 'script_error',
  script_error: 'script_error',
  model_error: 'model_error',
  context_overflow: 'model_error',
  model_timeout: 'model_timeout',
  bad_agent_spec: 'invalid_input',
};

/**
 * Any thrown value as an {@link AppError}: an error with a known `code` (ServiceError,
 * StoreError, SandboxFailure, TraceCorruptError) keeps it; an agent failure maps its end
 * reason; anything else is `internal` with its message, prefixed by the operation.
 */
export function toAppError(e: unknown, op: string): AppError {
  const error = e as { code?: unknown; endReason?: unknown; message?: unknown; fix?: unknown };
  const message = typeof error?.message === 'string' ? error.message : String(e);
  const fix = typeof error?.fix === 'string' && error.fix ? ` Fix: ${error.fix}` : '';
  const code = AppErrorCode.safeParse(error?.code);
  if (code.success) return appError(code.data, message + fix);
  if (typeof error?.endReason === 'string' && AGENT_CODES[error.endReason])
    return appError(AGENT_CODES[error.endReason], message);
  return appError('internal', `${op}: ${message}${fix}`);
}
