import { utf8Length, type ToolResult } from '../tool-result.js';
import { flag, type Flag } from './flag.js';
import type { QaInput } from './qa-input.js';

/** The share of a result's bytes the output caps dropped (0 when nothing was cut). */
export function droppedShare(r: ToolResult): number {
  if (!r.truncated || (!r.truncated.stdout && !r.truncated.stderr) || r.bytes <= 0) return 0;
  const kept = utf8Length(r.stdout ?? '') + utf8Length(r.stderr ?? '');
  return Math.max(0, Math.min(1, 1 - kept / r.bytes));
}

/**
 * `output_flood`: a tool result lost more than `qa.flood_share` (50 %) of its bytes to the
 * output caps — `cat` of a huge log — and the agent then acted on it (a later step: a call
 * or a final answer decided from a view that was mostly cut away). Flagged at that later
 * step, once per flooded result, so the rule also runs live.
 */
export function checkOutputFlood(input: QaInput): Flag[] {
  const limit = input.task.qa.flood_share;
  const flags: Flag[] = [];
  let pending: { step: number; name: string; bytes: number; share: number }[] = [];
  for (const e of input.events) {
    if (e.type === 'tool_result') {
      const share = droppedShare(e.result);
      if (share > limit) pending.push({ step: e.step, name: e.name, bytes: e.result.bytes, share });
    } else if ((e.type === 'action' || e.type === 'parse_error') && pending.length > 0) {
      for (const p of pending.filter((p) => p.step < e.step))
        flags.push(
          flag(
            'output_flood',
            e.step,
            'warning',
            `step ${e.step} acted on the result of step ${p.step} (${p.name}), of whose ${p.bytes} bytes ${Math.round(100 * p.share)} % were cut by the output cap`,
            { result_step: p.step, call: p.name, bytes: p.bytes, dropped_share: p.share },
          ),
        );
      pending = pending.filter((p) => p.step >= e.step);
    }
  }
  return flags;
}
