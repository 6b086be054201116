import { appError, type AppError, type AppErrorCode } from '../../shared/errors.js';
import { consentMessage } from '../../shared/isolation-policy.js';
import { engineError } from '../engine/engine-error.js';
import { ConsentRequired } from '../engine/harness/recorded-task.js';

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

/**
 * Any thrown value as an {@link AppError}, through the engine's one mapping
 * ({@link engineError}, which the CLI's exit codes use too); anything it does not know is
 * `internal` with its message, prefixed by the operation.
 */
export function toAppError(e: unknown, op: string): AppError {
  // The window (desktop or browser) asks for consent itself: its reader has no flags to pass.
  if (e instanceof ConsentRequired)
    return appError('consent_required', consentMessage(e.source, e.missing, 'window'));
  const mapped = engineError(e);
  if (mapped) return appError(mapped.code, mapped.message + (mapped.fix ? ` Fix: ${mapped.fix}` : ''));
  const message = e instanceof Error ? e.message : String(e);
  return appError('internal', `${op}: ${message}`);
}
