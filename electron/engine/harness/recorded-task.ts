import {
  consentMessage,
  widerThanDefaults,
  withoutConsent,
  type Widening,
  type WideningKind,
} from '../../../shared/isolation-policy.js';
import { parseTask, type Task } from '../../../shared/task.js';
import { HarnessError } from './harness-error.js';

/**
 * The task a recorded branch ran (its trace header), for rebuilding its sandbox (open,
 * reopen, fork, resume, replay, what-if). Throws `invalid_task` when it does not parse,
 * and `consent_required` when it asks for a looser sandbox than the defaults (network,
 * image, limits) beyond what the user consented to (shared/isolation-policy.ts).
 */
export function recordedTask(recorded: unknown, branch: string, consent: readonly WideningKind[] = []): Task {
  const source = `the task recorded in ${branch}`;
  const parsed = parseTask(recorded, source);
  if (!parsed.ok) throw new HarnessError('invalid_task', parsed.error.message);
  return consentedTask(parsed.value, source, consent);
}

/**
 * THE recorded-task policy, for a task already parsed (a trace header's, or a case from
 * the store's library: saved from an episode or imported from a bundle): returns it when
 * everything it asks beyond the defaults is consented to, else throws `consent_required`
 * naming what and the flags. `source` names where it came from in the message.
 */
export function consentedTask(task: Task, source: string, consent: readonly WideningKind[] = []): Task {
  const missing = withoutConsent(widerThanDefaults(task.sandbox), consent);
  if (missing.length) throw new ConsentRequired(source, missing);
  return task;
}

/**
 * A recorded task refused for want of consent: what asked and what is wider, so each
 * surface words the fix for its reader (the CLI its flags, the window its prompt: toAppError).
 */
export class ConsentRequired extends HarnessError {
  constructor(
    readonly source: string,
    readonly missing: readonly Widening[],
  ) {
    super('consent_required', consentMessage(source, missing));
  }
}
