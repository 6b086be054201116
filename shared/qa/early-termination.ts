import { flag, type Flag } from './flag.js';
import { endOf, eventsOf, type QaInput } from './qa-input.js';
import { endText } from '../end-words.js';

/**
 * Fatal errors of the machinery, not of the agent (design: Docker became unreachable, the
 * model endpoint failed after retries): the episode's status (`error`) and `end_reason` say
 * them. Flagged as the agent's early termination, a model server that was not running read
 * as an agent that misbehaved. A lost sandbox stays flagged: the agent's own command (a
 * runaway build, a fork bomb) is the usual cause.
 */
export const INFRASTRUCTURE_FAILURES: ReadonlySet<string> = new Set([
  'model_error',
  'docker_unreachable',
  'snapshot_failed',
  'restore_failed',
]);

/**
 * `early_termination`: a fatal error of the agent ended the episode (status `error`, or a
 * fatal `error` event) — an agent that crashed, exited or ran out of script; an
 * infrastructure failure is not flagged (INFRASTRUCTURE_FAILURES).
 */
export function checkEarlyTermination(input: QaInput): Flag[] {
  const fatal = eventsOf(input.events, 'error').find((e) => e.fatal);
  const end = endOf(input.events);
  if (INFRASTRUCTURE_FAILURES.has(fatal?.code ?? end?.end_reason ?? '')) return [];
  if (fatal) {
    // On the last step the agent took: the one whose tools were under way when it came, else the
    // last before it. The error itself is the step it failed in, which for a decision that never
    // came (a script that ran out) is the next one, with nothing of the agent's in it.
    const before = input.events.filter((e) => e.seq < fatal.seq && e.type !== 'header').map((e) => e.step);
    const step = before.length ? Math.max(...before) : fatal.step;
    return [
      flag(
        'early_termination',
        step,
        'error',
        // The reason in words, not the code and the whole message: the episode's end says those,
        // and the window showed "script_exhausted: …" three times on one screen.
        `a fatal error ended the episode before a final answer: ${endText('error', fatal.code)}`,
        {
          code: fatal.code,
          message: fatal.message,
          seq: fatal.seq,
          end_reason: end?.end_reason ?? null,
        },
      ),
    ];
  }
  if (end?.status === 'error') {
    return [
      flag(
        'early_termination',
        end.step,
        'error',
        `the episode ended in an error: ${endText('error', end.end_reason)}`,
        {
          end_reason: end.end_reason,
        },
      ),
    ];
  }
  return [];
}
