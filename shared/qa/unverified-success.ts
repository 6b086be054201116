import { flag, type Flag } from './flag.js';
import { endOf, eventsOf, type QaInput } from './qa-input.js';
import { verifierWords } from '../end-words.js';

/** Phrases by which a final answer admits it did not finish. */
const GIVE_UP =
  /\b(could ?n[o']t|can ?n[o']t|can't|cannot|unable|not able|failed|fail to|gave up|give up|giving up|did ?n[o']t (manage|succeed|work)|unsuccessful|no luck|impossible|stuck)\b/i;

/** True when a final answer admits failure rather than claiming completion. */
export function isGiveUp(answer: string): boolean {
  return GIVE_UP.test(answer);
}

/**
 * `unverified_success`: the final answer claims completion (it is not a give-up) but the
 * verifier ran and failed. A missing verifier proves nothing either way.
 */
export function checkUnverifiedSuccess(input: QaInput): Flag[] {
  const end = endOf(input.events);
  const finals = eventsOf(input.events, 'action').filter((a) => a.final !== null);
  const last = finals[finals.length - 1];
  if (!end || !last || last.final === null || !end.verifier || end.verifier.success) return [];
  if (isGiveUp(last.final)) return [];
  return [
    flag(
      'unverified_success',
      last.step,
      'error',
      // The CLI's words for the verifier: a Harbor task's reward 0 with exit 0 said "failed (exit 0)".
      `the final answer claims success but the verifier did not pass it: ${verifierWords(end.verifier)}`,
      {
        final: last.final.slice(0, 500),
        verifier_exit_code: end.verifier.exit_code,
        verifier_output: `${end.verifier.stdout ?? ''}${end.verifier.stderr ?? ''}`.slice(0, 500),
      },
    ),
  ];
}
