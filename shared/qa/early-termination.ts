import { flag, type Flag } from './flag.js';
import { endOf, eventsOf, type QaInput } from './qa-input.js';

/** `early_termination`: a fatal error ended the episode (status `error`, or a fatal `error` event). */
export function checkEarlyTermination(input: QaInput): Flag[] {
  const fatal = eventsOf(input.events, 'error').find((e) => e.fatal);
  const end = endOf(input.events);
  if (fatal) {
    // The harness stamps a fatal error with the last complete step; the step in progress is where it happened.
    const step = Math.max(fatal.step, ...input.events.filter((e) => e.seq < fatal.seq).map((e) => e.step));
    return [
      flag(
        'early_termination',
        step,
        'error',
        `a fatal error ended the episode: ${fatal.code}: ${fatal.message}`,
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
      flag('early_termination', end.step, 'error', `the episode ended with status error: ${end.end_reason}`, {
        end_reason: end.end_reason,
      }),
    ];
  }
  return [];
}
