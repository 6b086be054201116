import type { Consent } from '../../../shared/contract/models';
import { ALL_WIDENINGS } from '../../../shared/widening-kinds';
import type { Result } from '../../../shared/result';

/** The question put to a person: what the recorded task asks beyond the defaults (the engine's message). */
export interface ConsentAsk<Op extends string> {
  readonly op: Op;
  readonly message: string;
}

/** Runs operations that may rebuild a sandbox from a recorded task, asking the person on `consent_required`. */
export interface ConsentQuestion<Op extends string> {
  /**
   * Runs `call`; on `consent_required` shows the question (through `show`) and, if the
   * person allows, retries with consent to every widening the message named. Null when
   * the person refused (nothing was started).
   */
  run<T>(op: Op, call: (allow?: Consent) => Promise<Result<T>>): Promise<Result<T> | null>;
  /** The person's answer to the question shown. */
  answer(allowed: boolean): void;
}

/**
 * The one consent question of the window, shared by every slice whose operations start
 * a sandbox from a recorded task (replay controls, candidates): `show` puts the
 * question in the slice's state (null when it is answered).
 */
export function consentQuestion<Op extends string>(
  show: (ask: ConsentAsk<Op> | null) => void,
): ConsentQuestion<Op> {
  let answer: ((allowed: boolean) => void) | null = null;
  return {
    async run(op, call) {
      const first = await call();
      if (first.ok || first.error.code !== 'consent_required') return first;
      const allowed = await new Promise<boolean>((resolve) => {
        answer = resolve;
        show({ op, message: first.error.message });
      });
      answer = null;
      show(null);
      return allowed ? call([...ALL_WIDENINGS]) : null;
    },
    answer: (allowed) => answer?.(allowed),
  };
}

/**
 * The operation under way, as its button says it ("Reopening…"): none while the person is
 * asked whether to allow a looser sandbox, since nothing runs until Allow (the Reopen button
 * read "Reopening…" under the question, before the person had agreed).
 */
export function underWay<Op extends string>(running: Op | null, ask: ConsentAsk<Op> | null): Op | null {
  return ask ? null : running;
}

/** Why a slice's buttons wait while its consent question is open: the person's answer, not work. */
export const WAITING_FOR_ANSWER =
  'Waiting for your answer to the question above: allow the looser sandbox, or cancel.';
