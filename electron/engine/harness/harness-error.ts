import type { AppErrorCode } from '../../../shared/errors.js';

/** A controller operation that cannot be done now or with these arguments; `code` to branch on. */
export class HarnessError extends Error {
  override readonly name = 'HarnessError';
  constructor(
    readonly code: AppErrorCode,
    message: string,
  ) {
    super(message);
  }
}
