import { flag, type Flag } from './flag.js';
import { isGiveUp } from './give-up-words.js';
import { endOf, eventsOf, type QaInput } from './qa-input.js';
import { verifierWords } from '../end-words.js';

export { isGiveUp };

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
