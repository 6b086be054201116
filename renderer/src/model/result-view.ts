import { roundDurationMs } from '../../../shared/format-duration';
import type { ToolResult } from '../../../shared/tool-result';

/**
 * A tool result as the inspector's JSON views show it: the record as stored, but its
 * `duration_ms` rounded to 0.1 ms (`3.6`, not `3.6360289999993256`); the facts above it say
 * the duration in words.
 */
export function resultView(r: ToolResult): ToolResult {
  return typeof r.duration_ms === 'number' ? { ...r, duration_ms: roundDurationMs(r.duration_ms) } : r;
}
