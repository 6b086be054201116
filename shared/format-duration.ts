/**
 * A duration for people, as the window and reports show it: `0.4 ms`, `3.2 ms`, `412 ms`,
 * `1.24 s`, `12.3 s`, `2 min 05 s`. A tool call's `duration_ms` is a float from a
 * high-resolution clock; its digits past these say nothing a person can use. Null is a
 * duration not known (a call an agent inside the sandbox ran itself): `—`, never `0.0 ms`.
 * Its number and unit are joined by a plain space: these words go into the CLI's plain text and
 * shared files too; a view that must not break between them says so in its own style (the
 * inspector's `.quantity`).
 */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 9.95) return `${ms.toFixed(1)} ms`;
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 9_995) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** Why a duration reads `—` (its tooltip). */
export const NOT_TIMED =
  'not known: stepbox did not run this call (the agent inside the sandbox did, or the harness a trace was imported from) and saw only its output';

/** Why a duration reads `—` when a person gave the result: there was no run to time. */
export const NOT_RUN = 'no duration: a person gave this result and the tool did not run';

/**
 * A recorded `duration_ms` rounded to what {@link formatDuration} shows of it (0.1 ms), for
 * views of a raw record: the key and its unit stay, the clock's noise goes.
 */
export function roundDurationMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}
