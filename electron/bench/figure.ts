import { median } from '../../shared/median.js';

/**
 * A bench figure is what was measured, or null with the reason it could not be had — never
 * a stand-in. A figure clamped to 0 or computed from samples of different calls passes a
 * target it did not measure (command 6.2 ms alone vs a 4.0 ms call under load gave an
 * overhead of 0 and `target_met: true`).
 */
export type Figure =
  { readonly value: number; readonly reason?: undefined } | { readonly value: null; readonly reason: string };

/** One timed call: the host's time for the whole call, and the sandbox's time for its command in that same call. */
export interface CallTiming {
  readonly callMs: number;
  /** The command's own time as the sandbox measured it; undefined when the sandbox did not say. */
  readonly commandMs: number | undefined;
}

/**
 * What a call adds over its command: the median over calls of (call − its own command), both
 * from the same call. Null when a call lacks the sandbox's time, or when one took less on the
 * host than its command inside (the two clocks disagree: nothing to subtract honestly).
 */
export function callOverhead(calls: readonly CallTiming[]): Figure {
  if (calls.length === 0) return { value: null, reason: 'no call was timed' };
  const diffs: number[] = [];
  for (const c of calls) {
    if (c.commandMs === undefined || !Number.isFinite(c.commandMs))
      return { value: null, reason: "the sandbox did not report a command's own time" };
    const d = c.callMs - c.commandMs;
    if (d < 0)
      return {
        value: null,
        reason: `a call took ${c.callMs.toFixed(2)} ms on the host but its command ${c.commandMs.toFixed(2)} ms in the sandbox (clocks disagree)`,
      };
    diffs.push(d);
  }
  return { value: median(diffs) };
}

/** A figure from a plain measurement: null with `reason` when it is not a finite number. */
export function figureOf(value: number | null | undefined, reason: string): Figure {
  return typeof value === 'number' && Number.isFinite(value) ? { value } : { value: null, reason };
}

/** Whether a target is met: only by a measured figure; a missing one is never met. */
export function targetMet(figure: Figure, test: (value: number) => boolean): boolean {
  return figure.value !== null && test(figure.value);
}

/**
 * The median of per-sample differences (a round trip minus the part it wraps, timed in the
 * same iteration). Null when there is none, or when the median comes out negative: the noise
 * is then larger than what was to be measured, and 0 would pass a target nothing measured.
 */
export function differenceOf(diffs: readonly number[], what: string): Figure {
  if (diffs.length === 0) return { value: null, reason: `${what}: nothing was timed` };
  const m = median(diffs);
  return m >= 0
    ? { value: m }
    : { value: null, reason: `${what}: the median difference was ${m.toFixed(2)} ms (below 0: noise)` };
}
