/**
 * TEST-ONLY crash points. `STEPBOX_TEST_CRASH_AT=NAME` makes this process SIGKILL itself
 * when it reaches the point called NAME, so a test can kill stepbox at an exact moment
 * (between creating an episode folder and writing its meta, half-way through a trace
 * header, …) instead of racing a timer. Unset — always, outside tests — it does nothing.
 *
 * Points: `episode-folder` (the episode's folder made, nothing in it), `episode-meta`
 * (its meta.json written, no trace yet), `trace-header` (half a trace header written),
 * `batch-slot-recorded` (a batch slot's episode id written, the episode not yet created).
 */
export type CrashPoint = 'episode-folder' | 'episode-meta' | 'trace-header' | 'batch-slot-recorded';

/** The environment variable that names the crash point (test-only). */
export const CRASH_AT_ENV = 'STEPBOX_TEST_CRASH_AT';

/** Dies here, by SIGKILL (no cleanup, no exit handlers), when `STEPBOX_TEST_CRASH_AT` names this point. */
export function crashPoint(name: CrashPoint): void {
  if (process.env[CRASH_AT_ENV] === name) process.kill(process.pid, 'SIGKILL');
}
