import { AppErrorCode } from '../../shared/errors.js';
import { EXIT, InfraError, UsageError } from './command.js';

/** What the CLI prints for an error no command handled: the message, the fix, the exit code. */
export interface ErrorReport {
  readonly message: string;
  readonly fix?: string;
  readonly exit: number;
  /** Only for a bug in stepbox: the stack, printed with STEPBOX_LOG=debug. */
  readonly stack?: string;
}

/** Codes that mean the caller asked for something that is not there or not valid. */
const USAGE_CODES = new Set<string>(['usage', 'invalid_task', 'invalid_input', 'not_found', 'conflict']);

/** Damage in the store: a file that is missing, torn or does not hash to its name. */
const DAMAGE_FIX =
  're-import the episode from its bundle (npx stepbox bundle import FILE --force), or remove it; ' +
  'npx stepbox gc clears what crashed runs left behind';

/** The fix of each code that is not the caller's mistake. */
const FIXES: Partial<Record<AppErrorCode, string>> = {
  docker_unreachable: 'npx stepbox doctor (it names the fix)',
  image_missing: 'npx stepbox image build',
  image_outdated: 'npx stepbox image build',
  sandbox_failed: 'npx stepbox doctor',
  sandbox_lost: 'npx stepbox doctor',
  trace_corrupt: DAMAGE_FIX,
  snapshot_corrupt: DAMAGE_FIX,
  verify_failed: `a snapshot blob in the store is damaged: ${DAMAGE_FIX}`,
  restore_failed: 'npx stepbox doctor; if Docker is fine, the snapshot is damaged: ' + DAMAGE_FIX,
  snapshot_failed: 'npx stepbox doctor',
};

/** File-system errors, by errno code: what it means for the user. */
const FS_FIXES: Record<string, string> = {
  ENOSPC: 'free disk space (npx stepbox gc --older-than 30d removes old episodes)',
  EDQUOT: 'free disk space (npx stepbox gc --older-than 30d removes old episodes)',
  EACCES: 'check the permissions of $STEPBOX_HOME (default ~/.stepbox) and of the files named',
  EPERM: 'check the permissions of $STEPBOX_HOME (default ~/.stepbox) and of the files named',
  EROFS: 'point $STEPBOX_HOME at a writable folder',
  ENOENT: DAMAGE_FIX,
  EISDIR: DAMAGE_FIX,
  ENOTDIR: DAMAGE_FIX,
};

/**
 * The one mapping from an error to what the CLI prints and exits with (Contracts: CLI):
 * the caller's mistake (usage, unknown id, bad input) exits 2; the machine or the store
 * (Docker, a damaged file, a full disk) exits 3 with the command that fixes it; only an
 * error no code describes is reported as a bug in stepbox — still without a stack,
 * unless STEPBOX_LOG=debug asks for it.
 */
export function errorReport(e: unknown): ErrorReport {
  if (e instanceof UsageError) return { message: e.message, exit: EXIT.usage };
  if (e instanceof InfraError) return { message: e.message, fix: e.fix, exit: EXIT.infra };
  const error = e as { code?: unknown; message?: unknown; fix?: unknown; stack?: unknown } | null;
  const message = typeof error?.message === 'string' ? error.message : String(e);
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const ownFix = typeof error?.fix === 'string' && error.fix ? error.fix : undefined;
  if (code !== undefined && USAGE_CODES.has(code)) return { message, fix: ownFix, exit: EXIT.usage };
  const app = AppErrorCode.safeParse(code);
  if (app.success && app.data !== 'internal')
    return { message, fix: ownFix ?? FIXES[app.data], exit: EXIT.infra };
  if (code !== undefined && FS_FIXES[code]) return { message, fix: FS_FIXES[code], exit: EXIT.infra };
  return {
    message: `internal error (a bug in stepbox; STEPBOX_LOG=debug prints the stack): ${message}`,
    exit: EXIT.failed,
    stack: typeof error?.stack === 'string' ? error.stack : undefined,
  };
}
