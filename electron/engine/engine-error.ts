import { AppErrorCode, type AppError } from '../../shared/errors.js';

/** An engine failure as data: its application code, what went wrong and, when the error names one, the command that fixes it. */
export interface EngineError extends AppError {
  readonly fix: string | null;
}

/** How an agent's failure (`AgentFailure.endReason`) reads as an application code; other reasons are bad input. */
const AGENT_CODES: Record<string, AppErrorCode> = {
  script_exhausted: 'script_error',
  script_error: 'script_error',
  model_error: 'model_error',
  context_overflow: 'model_error',
  model_timeout: 'model_timeout',
  bad_agent_spec: 'invalid_input',
};

/**
 * Engine-internal codes that read as an application code: a case that cannot be run as
 * asked (CaseError `invalid_case`: an imported case's agent refused, a bad bundle) is the
 * caller's input, not a bug — without this it reached the CLI as "internal error", exit 1.
 */
const CODE_ALIASES: Record<string, AppErrorCode> = { invalid_case: 'invalid_input' };

/** The fix of damage in the store: a file that is missing, torn or does not hash to its name. */
const STORE_DAMAGE_FIX =
  're-import the episode from its bundle (npx stepbox bundle import FILE --force), or remove it; ' +
  'npx stepbox gc clears what crashed runs left behind';

/** The command that fixes an infrastructure failure, by code (the services ask Docker for a more precise one). */
export const DEFAULT_FIXES: Partial<Record<AppErrorCode, string>> = {
  docker_unreachable: 'npx stepbox doctor (it names the fix)',
  limits_unenforced: 'npx stepbox doctor (it names the fix)',
  image_missing: 'npx stepbox image build',
  image_outdated: 'npx stepbox image build',
  runtime_unavailable: 'npx stepbox doctor (it names the runtimes the engine offers)',
  sandbox_failed: 'npx stepbox doctor',
  sandbox_lost: 'npx stepbox doctor',
  snapshot_failed: 'npx stepbox doctor',
  trace_corrupt: STORE_DAMAGE_FIX,
  snapshot_corrupt: STORE_DAMAGE_FIX,
  verify_failed: `a snapshot blob in the store is damaged: ${STORE_DAMAGE_FIX}`,
  restore_failed: `npx stepbox doctor; if Docker is fine, the snapshot is damaged: ${STORE_DAMAGE_FIX}`,
};

/** Codes that mean the caller's input is wrong (CLI exit 2), as opposed to the machine (exit 3). */
const INPUT_CODES: ReadonlySet<AppErrorCode> = new Set<AppErrorCode>([
  'usage',
  'invalid_task',
  'invalid_input',
  'build_failed',
  'not_found',
  'conflict',
  'consent_required',
  'script_error',
  'model_error',
  'model_timeout',
]);

/**
 * The one mapping of engine errors, shared by the CLI (exit codes) and the services
 * (errors as data): an error carrying an application `code` (StoreError, HarnessError,
 * SandboxFailure, ServiceError, TraceCorruptError) keeps it; an agent failure maps its
 * end reason (a bad agent spec is `usage`); anything else is null (a bug, not a failure
 * the engine raises on purpose).
 */
export function engineError(e: unknown): EngineError | null {
  const error = e as { code?: unknown; endReason?: unknown; message?: unknown; fix?: unknown } | null;
  if (typeof error !== 'object' || error === null) return null;
  const message = typeof error.message === 'string' ? error.message : String(e);
  const own = typeof error.fix === 'string' && error.fix ? error.fix : null;
  const alias = typeof error.code === 'string' && Object.hasOwn(CODE_ALIASES, error.code);
  const code = AppErrorCode.safeParse(alias ? CODE_ALIASES[error.code as string] : error.code);
  if (code.success) return { code: code.data, message, fix: own };
  if (typeof error.endReason === 'string' && e instanceof Error && e.name === 'AgentFailure')
    return { code: AGENT_CODES[error.endReason] ?? 'usage', message, fix: own };
  return null;
}

/** Whether an engine error is the caller's bad input (CLI: a usage error, exit 2). */
export function isInputError(error: EngineError): boolean {
  return INPUT_CODES.has(error.code);
}
