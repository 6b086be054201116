import { memoryCorruption } from '../memory-corruption.js';
import { flag, type Flag } from './flag.js';
import { eventsOf, type QaInput } from './qa-input.js';

/**
 * `memory_corruption`: a memory write the one shared detector calls corrupt — the
 * `corruption` the harness recorded on the event, or the detector run on it now (traces
 * written before the field existed).
 */
export function checkMemoryCorruption(input: QaInput): Flag[] {
  const policy = input.task.memory;
  return eventsOf(input.events, 'memory_write').flatMap((w) => {
    const why = w.corruption ?? memoryCorruption(w, policy);
    if (!why) return [];
    return [
      flag('memory_corruption', w.step, 'error', why, {
        key: w.key,
        before: w.before,
        after: w.after,
        writer: w.writer,
        seq: w.seq,
      }),
    ];
  });
}
