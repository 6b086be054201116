/**
 * A span of wall time for people, as the Running list shows ages, idle times and the idle
 * limit: `42 s`, `3 min`, `1 h 05 min` (whole units, rounded down: "idle 3 min" is never
 * said of 2 min 50 s). Apart from format-duration.ts, which shows a tool call's milliseconds.
 */
export function formatSpan(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}
