import type { ToolResult } from './tool-result.js';

/**
 * (Its own file, with no zod: the timeline rows read it in the window's first chunk.)
 *
 * How long a call's tool took, as far as anyone measured: the real result's when the agent was
 * shown another (an override, a fallback), null when a person gave the result and the tool never
 * ran. Such a result was recorded with `duration_ms: 0` before it could be null, and the window
 * said "0.0 ms" of a tool that did not run: whatever it holds, it is no time.
 */
export function measuredDuration(
  shown: Pick<ToolResult, 'duration_ms'>,
  real: Pick<ToolResult, 'duration_ms'> | null | undefined,
  givenByPerson: boolean,
): number | null {
  if (real) return real.duration_ms;
  return givenByPerson ? null : shown.duration_ms;
}
