import { flag, type Flag } from './flag.js';
import { agentSteps, endOf, type QaInput } from './qa-input.js';

/** How many times the reference an episode may take before it is flagged. */
export const EFFICIENCY_FACTOR = 3;
/** Fewest other episodes of a task whose median counts as a reference. */
export const MIN_MEDIAN_SAMPLES = 3;

/**
 * `efficiency`: more steps than 3× `qa.expected_steps` (or 3× the median of the same
 * task's episodes in the index), or a duration above 3× the median duration.
 */
export function checkEfficiency(input: QaInput): Flag[] {
  const flags: Flag[] = [];
  const steps = agentSteps(input.events).length;
  const ref = input.reference ?? {};
  const enough = (ref.samples ?? 0) >= MIN_MEDIAN_SAMPLES;
  const expected = input.task.qa.expected_steps ?? (enough ? (ref.medianSteps ?? null) : null);
  if (expected !== null && expected > 0 && steps > EFFICIENCY_FACTOR * expected) {
    flags.push(
      flag(
        'efficiency',
        0,
        'warning',
        `${steps} steps, more than ${EFFICIENCY_FACTOR}× the expected ${expected}`,
        {
          steps,
          expected,
          source: input.task.qa.expected_steps ? 'qa.expected_steps' : 'median',
        },
      ),
    );
  }
  const first = input.events[0];
  const end = endOf(input.events);
  const median = enough ? (ref.medianDurationMs ?? null) : null;
  if (first && end && median !== null && median > 0) {
    const duration = end.t - first.t;
    if (duration > EFFICIENCY_FACTOR * median) {
      flags.push(
        flag(
          'efficiency',
          0,
          'warning',
          `took ${(duration / 1000).toFixed(1)} s, more than ${EFFICIENCY_FACTOR}× the median ${(median / 1000).toFixed(1)} s`,
          { duration_ms: duration, median_ms: median },
        ),
      );
    }
  }
  return flags;
}
