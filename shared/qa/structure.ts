import { CURRENT_TRACE_SCHEMA } from '../trace-events.js';
import { flag, type Flag } from './flag.js';
import { agentSteps, type QaInput } from './qa-input.js';

/**
 * `structure`: the trace starts with a header of a known schema, ends with an `end`
 * event (unless a live process still writes it), numbers its events and steps without gaps (a fork's first step is K+1), and
 * has no torn tail.
 */
export function checkStructure(input: QaInput): Flag[] {
  const { events } = input;
  const flags: Flag[] = [];
  const first = events[0];
  if (!first || first.type !== 'header') {
    flags.push(
      flag('structure', 0, 'error', 'the trace does not start with a header event', {
        first: first?.type ?? null,
      }),
    );
    return flags;
  }
  if (first.schema !== CURRENT_TRACE_SCHEMA) {
    flags.push(
      flag('structure', 0, 'error', `unknown trace schema "${first.schema}"`, {
        schema: first.schema,
        expected: CURRENT_TRACE_SCHEMA,
      }),
    );
  }
  if (input.torn) {
    flags.push(flag('structure', 0, 'error', 'the last line of the trace is torn (a crash mid-write)', {}));
  }
  const ends = events.filter((e) => e.type === 'end');
  if (ends.length === 0) {
    if (!input.open)
      flags.push(flag('structure', 0, 'error', 'the trace has no end event: the episode never closed', {}));
  } else if (ends.length > 1 || events[events.length - 1].type !== 'end') {
    flags.push(
      flag('structure', ends[0].step, 'error', 'events follow the end event', { ends: ends.length }),
    );
  }
  for (let i = 1; i < events.length; i++) {
    if (events[i].seq !== events[i - 1].seq + 1) {
      flags.push(
        flag(
          'structure',
          events[i].step,
          'error',
          `event numbering jumps from ${events[i - 1].seq} to ${events[i].seq}`,
          {
            before: events[i - 1].seq,
            after: events[i].seq,
          },
        ),
      );
      break;
    }
  }
  const firstStep = (first.fork_step ?? 0) + 1;
  const steps = agentSteps(events);
  // After a rollback the branch may revisit a step number, so only gaps count.
  const expected = new Set<number>();
  const last = steps.length ? steps[steps.length - 1] : firstStep - 1;
  for (let s = firstStep; s <= last; s++) expected.add(s);
  const seen = new Set(steps);
  const missing = [...expected].filter((s) => !seen.has(s));
  if (steps.length && steps[0] < firstStep) {
    flags.push(
      flag('structure', steps[0], 'error', `step ${steps[0]} precedes the branch's first step ${firstStep}`, {
        first_step: firstStep,
      }),
    );
  }
  if (missing.length) {
    flags.push(
      flag('structure', missing[0], 'error', `steps are not contiguous: missing ${missing.join(', ')}`, {
        missing,
      }),
    );
  }
  return flags;
}
