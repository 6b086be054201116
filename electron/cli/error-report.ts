import { DEFAULT_FIXES, engineError, isInputError } from '../engine/engine-error.js';
import { EXIT, InfraError, UsageError } from './command.js';

/** What the CLI prints for an error no command handled: the message, the fix, the exit code. */
export interface ErrorReport {
  readonly message: string;
  readonly fix?: string;
  readonly exit: number;
  /** Only for a bug in stepbox: the stack, printed with STEPBOX_LOG=debug. */
  readonly stack?: string;
}

/** File-system errors, by errno code: what it means for the user. */
const FS_FIXES: Record<string, string> = {
  ENOSPC: 'free disk space (npx stepbox gc --older-than 30d removes old episodes)',
  EDQUOT: 'free disk space (npx stepbox gc --older-than 30d removes old episodes)',
  EACCES: 'check the permissions of $STEPBOX_HOME (default ~/.stepbox) and of the files named',
  EPERM: 'check the permissions of $STEPBOX_HOME (default ~/.stepbox) and of the files named',
  EROFS: 'point $STEPBOX_HOME at a writable folder',
  ENOENT: DEFAULT_FIXES.trace_corrupt ?? '',
  EISDIR: DEFAULT_FIXES.trace_corrupt ?? '',
  ENOTDIR: DEFAULT_FIXES.trace_corrupt ?? '',
};

/**
 * What the CLI prints and exits with for an error no command handled (Contracts: CLI),
 * on top of the engine's one mapping ({@link engineError}):
 * the caller's mistake (usage, unknown id, bad input) exits 2; the machine or the store
 * (Docker, a damaged file, a full disk) exits 3 with the command that fixes it; only an
 * error no code describes is reported as a bug in stepbox — still without a stack,
 * unless STEPBOX_LOG=debug asks for it.
 */
export function errorReport(e: unknown): ErrorReport {
  if (e instanceof UsageError) return { message: e.message, exit: EXIT.usage };
  if (e instanceof InfraError) return { message: e.message, fix: e.fix, exit: EXIT.infra };
  const error = e as { code?: unknown; message?: unknown; stack?: unknown } | null;
  const message = typeof error?.message === 'string' ? error.message : String(e);
  // The engine's one mapping decides input (2) against machine (3), and the fix.
  const mapped = engineError(e);
  if (mapped && mapped.code !== 'internal')
    return isInputError(mapped)
      ? { message, fix: mapped.fix ?? undefined, exit: EXIT.usage }
      : { message, fix: mapped.fix ?? DEFAULT_FIXES[mapped.code], exit: EXIT.infra };
  const code = typeof error?.code === 'string' ? error.code : undefined;
  if (code !== undefined && FS_FIXES[code]) return { message, fix: FS_FIXES[code], exit: EXIT.infra };
  return {
    message: `internal error (a bug in stepbox; STEPBOX_LOG=debug prints the stack): ${message}`,
    exit: EXIT.failed,
    stack: typeof error?.stack === 'string' ? error.stack : undefined,
  };
}
